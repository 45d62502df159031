"""The Flask application (see STYLE.md); grows with the API issue."""
