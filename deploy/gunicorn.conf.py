"""gunicorn settings for production: `gunicorn -c deploy/gunicorn.conf.py 'service.app:create_app()'`.

The settings live in the package (service/gunicorn_config.py), so that `ricochet
serve` and an installed service run the very same configuration."""

from service.gunicorn_config import *  # noqa: F403
