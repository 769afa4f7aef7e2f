"""Production: MySQL shards from the config source, secrets from the environment, HTTPS only.

The README's table of environment variables says which production needs.
"""

from pinboard.logs import logging_config

from . import environment
from .base import *  # noqa: F403
from .base import CONTENT_SECURITY_POLICY
from .s3 import s3_storages
from .secret import production_key

SECRET_KEY = production_key(environment.SECRET_KEY)  # refuses a weak or published key

# JSON lines for the log collector, unless PINBOARD_LOG_FORMAT=text.
LOG_FORMAT = environment.LOG_FORMAT or "json"
LOGGING = logging_config(LOG_FORMAT)

# HTTPS only. TLS ends at the load balancer, which forwards plain HTTP with
# X-Forwarded-Proto; the app servers must be reachable only through it, or a
# client could claim HTTPS with that header.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = True
SECURE_HSTS_SECONDS = 365 * 24 * 3600
# Every subdomain of the site's domain must serve HTTPS too; preload lets the
# domain be submitted to browsers' built-in HSTS lists.
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
# The client's address, for rate limits: nginx, on the same host and the only way in
# (gunicorn listens on loopback), sets X-Real-IP from the load balancer's X-Forwarded-For
# and overwrites whatever a client sent.
CLIENT_ADDRESS_HEADER = "HTTP_X_REAL_IP"
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True

if environment.S3_BUCKET:
    _bucket = environment.S3_BUCKET
    _region = environment.S3_REGION
    _media_domain = environment.MEDIA_DOMAIN  # e.g. CloudFront
    STORAGES = s3_storages(_bucket, _region, _media_domain)
    # Pin images come from the media domain, or from the bucket's own S3 host names; a
    # secret board's, signed, always from the bucket's.
    _media_origins = ([f"https://{_media_domain}"] if _media_domain else []) + [
        f"https://{_bucket}.s3.amazonaws.com",
        *([f"https://{_bucket}.s3.{_region}.amazonaws.com"] if _region else []),
    ]
    _directives = CONTENT_SECURITY_POLICY["DIRECTIVES"]
    CONTENT_SECURITY_POLICY = {
        **CONTENT_SECURITY_POLICY,
        "DIRECTIVES": {**_directives, "img-src": [*_directives["img-src"], *_media_origins]},
    }
