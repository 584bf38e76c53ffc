"""Settings shared by every environment, all read through one ``environ.Env``.

With nothing set the service runs embedded: a SQLite file, Celery tasks executed eagerly
in-process and a local-memory cache. ``DATABASE_URL`` switches to PostgreSQL (psycopg 3) and
``REDIS_URL`` to Redis for the Celery broker, its result backend and the cache.
"""

from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
if (BASE_DIR / ".env").exists():  # optional, for local runs; the environment always wins
    env.read_env(str(BASE_DIR / ".env"), overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "catalog",
    "sizing",
    "scrapers",
    "web",
    "ops",
    "devtools",
]

MIDDLEWARE = [
    "ops.middleware.RequestIdMiddleware",
    "ops.middleware.MetricsMiddleware",
    "ops.throttling.LoadShedMiddleware",
    "ops.limits.RequestBoundsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "ops.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.gzip.GZipMiddleware",
    "django.middleware.http.ConditionalGetMiddleware",
    "ops.middleware.ApiCacheControlMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "ops.security.AdminLoginThrottleMiddleware",
    "ops.throttling.PageThrottleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DJANGO_CONN_MAX_AGE", default=0)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache and Celery -----------------------------------------------------------------------
REDIS_URL = env("REDIS_URL", default="")
if REDIS_URL:
    # Redis is a dependency, not a single point of failure: with short timeouts and no retries,
    # a refused or hanging Redis sends the cache (throttle counts, reusable answers) to a local
    # stand-in for REDIS_RETRY_AFTER_S, with a rate-limited warning (ops/cache.py).
    CACHES = {
        "default": {
            "BACKEND": "ops.cache.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env("CACHE_KEY_PREFIX", default="gpuatlas"),
            "OPTIONS": {
                "socket_timeout": env.float("REDIS_SOCKET_TIMEOUT_S", default=0.5),
                "socket_connect_timeout": env.float("REDIS_CONNECT_TIMEOUT_S", default=0.5),
                "retry_after_s": env.float("REDIS_RETRY_AFTER_S", default=5.0),
            },
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_RESULT_BACKEND = "cache+memory://"
    CELERY_TASK_ALWAYS_EAGER = True
    CELERY_TASK_EAGER_PROPAGATES = True

CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TIMEZONE = "UTC"
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=15 * 60)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=12 * 60)
CELERY_TASK_ACKS_LATE = True
# A task whose worker process died (killed, out of memory) goes back to the queue instead of
# being dropped; a refresh redelivered while its dead run's lease still holds is skipped and the
# reaper below queues it again once the lease lapses.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Redis redelivers a message not acknowledged within the visibility timeout. It must outlast the
# longest task plus the longest retry countdown a worker holds unacknowledged (refresh_provider:
# 15 min limit, retries after up to 20 min, scrapers/tasks.py), or a healthy task runs twice.
REFRESH_MAX_RETRY_COUNTDOWN_S = 1200
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_TASK_TIME_LIMIT + REFRESH_MAX_RETRY_COUNTDOWN_S + 5 * 60
}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# A refresh holds a lease renewed every third of this while it runs; when its worker dies the
# lease lapses and the reaper (every SCRAPE_REAP_INTERVAL_SECONDS) marks the run failed and queues
# the refresh again: a crashed refresh is redone within lease + interval (3 min by default).
SCRAPE_LEASE_SECONDS = env.int("SCRAPE_LEASE_SECONDS", default=60)
SCRAPE_REAP_INTERVAL_SECONDS = env.int("SCRAPE_REAP_INTERVAL_SECONDS", default=120)
# Beat copies this entry into its database schedule at start (django_celery_beat).
CELERY_BEAT_SCHEDULE = {
    "reap-abandoned-refreshes": {
        "task": "scrapers.reap_abandoned_refreshes",
        "schedule": float(SCRAPE_REAP_INTERVAL_SECONDS),
    }
}

# --- Internationalisation -------------------------------------------------------------------
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
LOCALE_PATHS = [BASE_DIR / "locale"]  # the pages' translations (locale/zh_Hans)

# --- Static files ---------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- REST API -------------------------------------------------------------------------------
# Reverse proxies in front of the service that append to X-Forwarded-For (1 behind the compose
# nginx; 0 when gunicorn faces clients). The throttles, the admin lockout and the /metrics rule
# read the client address through it, so a caller cannot pick an address by sending the header.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
API_REQUIRE_TOKEN_FOR_READS = env.bool("API_REQUIRE_TOKEN_FOR_READS", default=False)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.ReadAnonymousWriteWithToken"],
    "DEFAULT_FILTER_BACKENDS": [
        "api.filters.StrictFilterBackend",
        "api.filters.StrictOrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.CatalogPagination",
    "PAGE_SIZE": 100,
    # Error answers, anonymous access and empty filters in the schema, for every operation.
    "DEFAULT_SCHEMA_CLASS": "api.schema.AutoSchema",
    # A ?format= no renderer of the endpoint knows is a 400 naming it (DRF answers 404).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.renderers.StrictContentNegotiation",
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "ops.throttling.AuthenticatedUserRateThrottle",
    ],
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    # Per client address (anon, page, plan) or per signed-in user (user; pages too when signed in).
    # /plan computes a recommendation per request, so it has the smallest page rate.
    "DEFAULT_THROTTLE_RATES": {
        "anon": env("API_ANON_THROTTLE_RATE", default="600/minute"),
        "user": env("API_USER_THROTTLE_RATE", default="3000/minute"),
        "page": env("PAGE_THROTTLE_RATE", default="300/minute"),
        "plan": env("PLAN_THROTTLE_RATE", default="60/minute"),
    },
    # JSON bodies are bounded in size, nesting and integer size (ops/limits.py; docs/api.md).
    "DEFAULT_PARSER_CLASSES": [
        "ops.limits.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "COERCE_DECIMAL_TO_STRING": False,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "GPU Atlas API",
    "DESCRIPTION": "GPU cloud catalog and sizing service: GPUs, interconnects, instances, "
    "prices and workload recommendations.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The schema and docs follow the API's read rule (token-only when reads need a token).
    "SERVE_PERMISSIONS": ["api.permissions.ReadAnonymousWriteWithToken"],
}

# Request bounds (ops/limits.py, docs/api.md): bodies over this many bytes get 413 before they
# are read (nginx in compose refuses them first, at the same size); JSON bodies may nest this deep.
REQUEST_MAX_BODY_BYTES = env.int("REQUEST_MAX_BODY_BYTES", default=1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_MAX_BODY_BYTES
REQUEST_MAX_JSON_DEPTH = 32

# Load shedding: a request that waited longer than this between the front proxy (its
# X-Request-Start stamp) and a worker is answered 503 with Retry-After instead of being served
# (0 turns it off). Above the served rate this keeps every wait near the bound; see
# docs/operations.md and bench/RESULTS.md.
LOAD_SHED_QUEUE_SECONDS = env.float("LOAD_SHED_QUEUE_SECONDS", default=2.0)
LOAD_SHED_RETRY_AFTER_SECONDS = env.int("LOAD_SHED_RETRY_AFTER_SECONDS", default=5)

# --- Catalog behaviour ----------------------------------------------------------------------
CATALOG_FIXTURES_DIR = env.path("CATALOG_FIXTURES_DIR", default=BASE_DIR / "fixtures")
# A list price (on-demand, monthly) not refreshed for this long is flagged stale in every answer.
PRICE_STALE_AFTER_DAYS = env.int("PRICE_STALE_AFTER_DAYS", default=30)
# Shelf life of a price by how fast its kind moves (catalog.querysets.shelf_life_days): spot and
# marketplace prices move daily, list prices monthly (PRICE_STALE_AFTER_DAYS, for every pricing
# model not named here), commitment terms yearly. Past it a price is stale: list prices are still
# ranked (flagged), spot and marketplace prices are left out unless the caller asks for them.
# Capacity blocks are a rate card AWS re-prices at scheduled reviews about every three months (its
# pricing page names the next one; the monthly readings of koyakimu/ec2-capacity-blocks-for-ml-
# pricing-json: unchanged 2026-01-31 to 03-01, every H100/H200/B200/B300 rate moved by 07-22). A
# reading may be a review old within weeks, so it is flagged after a month, as list prices are.
# Override some or all: PRICE_SHELF_LIFE_DAYS="spot=3,marketplace=2,on_demand=14".
PRICE_SHELF_LIFE_DAYS = {
    "spot": 7,
    "marketplace": 7,
    "capacity_block": 31,
    "yearly": 365,
    "reserved_1y": 365,
    "reserved_3y": 365,
    **{key: int(days) for key, days in env.dict("PRICE_SHELF_LIFE_DAYS", default={}).items()},
}
API_MAX_PAGE_SIZE = 1000
CSV_MAX_ROWS = env.int("CSV_MAX_ROWS", default=100_000)
# Whether a plan fits GPU memory is decided on the high end of the estimate's memory range
# ("high", sizing/uncertainty.json) or on the point estimate ("point"); a request's fit_on wins.
SIZING_FIT_ON = env.str("SIZING_FIT_ON", default="high")
if SIZING_FIT_ON not in ("high", "point"):
    raise ImproperlyConfigured(f"SIZING_FIT_ON must be high or point, not {SIZING_FIT_ON!r}")
# /api/recommend answers are reused for identical requests until the catalog changes (any
# refresh or edit), one of their prices turns stale, or this many seconds pass.
RECOMMEND_CACHE_SECONDS = env.int("RECOMMEND_CACHE_SECONDS", default=300)
# A process reads the catalog fingerprint (sizing.selectors.catalog_version, ~50 ms at 250,000
# prices) at most once per this many seconds; a refresh or an edit is seen up to this much later.
CATALOG_VERSION_MAX_AGE_S = env.float("CATALOG_VERSION_MAX_AGE_S", default=1.0)
# A thread of each process reads that fingerprint again before it ages out, while requests come,
# so that no request waits for the query (sizing.selectors.catalog_version_recent).
CATALOG_VERSION_BACKGROUND = env.bool("CATALOG_VERSION_BACKGROUND", default=True)
# After a catalog change each worker reads its new offer book in a background thread while the
# book it holds (one whole older version, none of its prices past shelf life) keeps answering.
OFFER_BOOK_BACKGROUND_REBUILD = env.bool("OFFER_BOOK_BACKGROUND_REBUILD", default=True)
# The gunicorn master reads the offer book before it forks the workers (gunicorn.conf.py), so no
# worker's first recommendation reads it from scratch (docs/operations.md).
OFFER_BOOK_READ_AT_START = env.bool("OFFER_BOOK_READ_AT_START", default=True)

# Logs: plain text by default, JSON lines (LOG_FORMAT=json, the production default) for machines;
# every line carries the request id (X-Request-ID, echoed on the response).
LOG_FORMAT = env("LOG_FORMAT", default="plain")
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "ops.logging.RequestIdFilter"},
        "client_errors": {"()": "ops.logging.ClientErrorFilter"},
        "celery_task": {"()": "ops.logging.CeleryTaskFilter"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "ops.logging.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id", "client_errors", "celery_task"],
        }
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}, "httpx": {"level": "WARNING"}},
}
# /metrics: with a token set, only for "Authorization: Bearer <token>"; without one, only for
# callers inside these networks (the client address as seen behind TRUSTED_PROXY_COUNT proxies).
METRICS_TOKEN = env("METRICS_TOKEN", default="")
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=["127.0.0.0/8", "::1/128"])

# --- Security -------------------------------------------------------------------------------
# Content-Security-Policy on every response: the pages load scripts, styles and images from this
# origin only (no inline script or style). The vendored API docs (Swagger UI, Redoc) and DRF's
# browsable API style elements inline, so they get a policy allowing inline styles (not scripts).
CONTENT_SECURITY_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
CONTENT_SECURITY_POLICY_RELAXED = {
    **CONTENT_SECURITY_POLICY,
    "style-src": "'self' 'unsafe-inline'",
    "worker-src": "'self' blob:",
}
CONTENT_SECURITY_POLICY_RELAXED_PATHS = ["/api/"]
# Admin login lockout: after this many failed logins from one address, or for one username,
# within the window, further attempts get 429 until the window ends.
ADMIN_LOGIN_MAX_FAILURES_PER_IP = env.int("ADMIN_LOGIN_MAX_FAILURES_PER_IP", default=20)
ADMIN_LOGIN_MAX_FAILURES_PER_USER = env.int("ADMIN_LOGIN_MAX_FAILURES_PER_USER", default=5)
ADMIN_LOGIN_LOCKOUT_SECONDS = env.int("ADMIN_LOGIN_LOCKOUT_SECONDS", default=15 * 60)

# --- Scrapers -------------------------------------------------------------------------------
# Base URL per scraper key, to point a source at staging or a loopback test server:
# SCRAPER_BASE_URLS="aws=http://127.0.0.1:9000/aws,azure=http://127.0.0.1:9000/azure"
SCRAPER_BASE_URLS = env.dict("SCRAPER_BASE_URLS", default={})
# Regions fetched per source, where a source is fetched region by region (default: the scraper's
# own list): SCRAPER_REGIONS="aws=us-east-1;us-west-2,azure=eastus"
SCRAPER_REGIONS = {
    key: [code for code in value.split(";") if code]
    for key, value in env.dict("SCRAPER_REGIONS", default={}).items()
}
SCRAPER_TIMEOUT_S = env.float("SCRAPER_TIMEOUT_S", default=30.0)
SCRAPER_RETRIES = env.int("SCRAPER_RETRIES", default=3)
SCRAPER_BACKOFF_S = env.float("SCRAPER_BACKOFF_S", default=1.0)
# Optional credentials; a source that needs one uses its public fallback when it is empty.
SCRAPER_CREDENTIALS = {
    "gcp_api_key": env("GCP_BILLING_API_KEY", default=""),
    "lambda_api_key": env("LAMBDA_API_KEY", default=""),
    "runpod_api_key": env("RUNPOD_API_KEY", default=""),
    "vastai_api_key": env("VASTAI_API_KEY", default=""),
    "alibaba_access_key_id": env("ALIBABA_ACCESS_KEY_ID", default=""),
    "alibaba_access_key_secret": env("ALIBABA_ACCESS_KEY_SECRET", default=""),
    "tencent_secret_id": env("TENCENT_SECRET_ID", default=""),
    "tencent_secret_key": env("TENCENT_SECRET_KEY", default=""),
    # The API answers in the account's billing currency (CNY for a China-site account).
    "tencent_currency": env("TENCENT_CURRENCY", default="CNY"),
    "huawei_access_key": env("HUAWEI_ACCESS_KEY", default=""),
    "huawei_secret_key": env("HUAWEI_SECRET_KEY", default=""),
    "huawei_project_id": env("HUAWEI_PROJECT_ID", default=""),
    "autodl_token": env("AUTODL_TOKEN", default=""),
    "aws_spot_source_url": env("AWS_SPOT_SOURCE_URL", default=""),
}
# Ingest rules.
SCRAPE_QUARANTINE_FACTOR = env.float("SCRAPE_QUARANTINE_FACTOR", default=3.0)
SCRAPE_GONE_AFTER_RUNS = env.int("SCRAPE_GONE_AFTER_RUNS", default=3)
# A refresh reading fewer records than this share of the provider's last good run (or losing a
# GPU name it had) is held for a curator instead of marking prices gone (docs/operations.md).
SCRAPE_HOLD_BELOW_SHARE = env.float("SCRAPE_HOLD_BELOW_SHARE", default=0.7)
SCRAPE_DEFAULT_INTERVAL_HOURS = env.int("SCRAPE_DEFAULT_INTERVAL_HOURS", default=6)

# --- Cross-check against a second source (scrapers/crosscheck.py, docs/operations.md) ----------
# SkyPilot's public catalog CSVs, read per hyperscaler: <raw base>/<commit or ref>/<path>. With an
# API base the newest commit of the file is looked up first and recorded ("" skips the lookup).
CROSSCHECK_SKYPILOT_RAW_BASE = env(
    "CROSSCHECK_SKYPILOT_RAW_BASE",
    default="https://raw.githubusercontent.com/skypilot-org/skypilot-catalog",
)
CROSSCHECK_SKYPILOT_API_BASE = env(
    "CROSSCHECK_SKYPILOT_API_BASE",
    default="https://api.github.com/repos/skypilot-org/skypilot-catalog",
)
CROSSCHECK_SKYPILOT_REF = env("CROSSCHECK_SKYPILOT_REF", default="master")
# Provider slug -> file in the repository; CROSSCHECK_SKYPILOT_PATHS="aws=catalogs/v8/aws/vms.csv".
CROSSCHECK_SKYPILOT_PATHS = {
    "aws": "catalogs/v8/aws/vms.csv",
    "azure": "catalogs/v8/azure/vms.csv",
    "gcp": "catalogs/v8/gcp/vms.csv",
    **env.dict("CROSSCHECK_SKYPILOT_PATHS", default={}),
}
# A disagreement is filed when the second source is more than this share away from our price.
CROSSCHECK_TOLERANCE = env.float("CROSSCHECK_TOLERANCE", default=0.10)
CROSSCHECK_INTERVAL_HOURS = env.int("CROSSCHECK_INTERVAL_HOURS", default=7 * 24)
