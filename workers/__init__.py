"""Celery app and tasks, and the Redis-backed stores.  Calls solver/; knows no HTTP."""
