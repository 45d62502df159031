"""The HTTP edge: the Flask application (service.app.create_app), one blueprint per concern, and the
`ricochet` command line (service.cli).  docs/architecture.md places every module."""
