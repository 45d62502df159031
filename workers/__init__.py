"""Celery app, tasks and Redis-backed stores (see STYLE.md); grows with the worker issue."""
