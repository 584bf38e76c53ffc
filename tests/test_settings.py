"""Settings behave as the README says: embedded by default, switched by environment."""

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent


def run_django(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "DJANGO_DEBUG")
    }
    return subprocess.run(
        [
            sys.executable,
            "-c",
            f"import django; django.setup(); from django.conf import settings; {code}",
        ],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_embedded_default_uses_sqlite_eager_celery_and_locmem():
    out = run_django(
        "print(settings.DATABASES['default']['ENGINE'], settings.CELERY_TASK_ALWAYS_EAGER, settings.CACHES['default']['BACKEND'])",
        DJANGO_SETTINGS_MODULE="config.settings.local",
    )
    assert out.returncode == 0, out.stderr
    assert "sqlite3 True" in out.stdout and "LocMemCache" in out.stdout


def test_urls_switch_to_postgres_and_redis():
    out = run_django(
        "print(settings.DATABASES['default']['ENGINE'], settings.CELERY_BROKER_URL, settings.CACHES['default']['BACKEND'], settings.CELERY_TASK_ALWAYS_EAGER)",
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL="postgres://u@127.0.0.1:5432/x",
        REDIS_URL="redis://127.0.0.1:6379/3",
    )
    assert out.returncode == 0, out.stderr
    assert "postgresql" in out.stdout and "redis://127.0.0.1:6379/3" in out.stdout
    assert "RedisCache False" in out.stdout


def test_secret_key_required_when_debug_is_off():
    for module in ("config.settings.production", "config.settings.local"):
        out = run_django("print(1)", DJANGO_SETTINGS_MODULE=module, DJANGO_DEBUG="false")
        assert out.returncode != 0 and "DJANGO_SECRET_KEY" in out.stderr, module


def test_production_starts_with_a_secret():
    out = run_django(
        "print(settings.DEBUG, settings.SESSION_COOKIE_SECURE)",
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY="s" * 50,
    )
    assert out.returncode == 0, out.stderr
    assert "False True" in out.stdout


def test_tests_run_on_the_configured_database():
    engine = settings.DATABASES["default"]["ENGINE"]
    expected = (
        "postgresql" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite3"
    )
    assert expected in engine


def _bare_environment() -> dict[str, str]:
    drop = (
        "DJANGO_SETTINGS_MODULE",
        "DJANGO_SECRET_KEY",
        "DJANGO_DEBUG",
        "DATABASE_URL",
        "REDIS_URL",
    )
    return {k: v for k, v in os.environ.items() if k not in drop}


def test_entry_points_default_to_production_settings():
    code = (
        "import os, importlib, sys; importlib.import_module(sys.argv[1]); "
        "print(os.environ['DJANGO_SETTINGS_MODULE'])"
    )
    for module in ("config.celery_app",):
        out = subprocess.run(
            [sys.executable, "-c", code, module],
            cwd=ROOT, env=_bare_environment(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "config.settings.production", module
    for module in ("config.wsgi", "config.asgi"):
        out = subprocess.run(
            [sys.executable, "-c", code, module],
            cwd=ROOT, env=_bare_environment(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert out.returncode != 0 and "DJANGO_SECRET_KEY must be set" in out.stderr, module


def test_manage_py_defaults_to_production_and_local_is_opt_in():
    bare = _bare_environment()
    refused = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT, env=bare, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode != 0 and "config.settings.local" in refused.stderr
    local = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT, env={**bare, "DJANGO_SETTINGS_MODULE": "config.settings.local"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert local.returncode == 0, local.stderr


def test_makemigrations_needs_no_secret_key_and_only_it_is_code_only():
    # The models are the same under every settings module: the migration check runs on a bare
    # checkout (local settings), while serving and data commands keep the production default.
    checked = subprocess.run(
        [sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"],
        cwd=ROOT, env=_bare_environment(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert "No changes detected" in checked.stdout
    for command in ("migrate", "load_catalog", "runserver", "shell"):
        refused = subprocess.run(
            [sys.executable, "manage.py", command, "--help"],
            cwd=ROOT, env=_bare_environment(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert refused.returncode != 0 and "DJANGO_SECRET_KEY must be set" in refused.stderr
