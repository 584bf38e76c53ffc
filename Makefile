# GPU Atlas: `make run` serves the service, `make test` runs the tests. Both set up .venv first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
STAMP := $(VENV)/.installed

.PHONY: run test install lint format check typecheck lock clean schema prod-check fuzz

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $(STAMP)

install: $(STAMP)

# manage.py (but for makemigrations, which reads only the models), WSGI, ASGI and Celery default to the production settings; `make run` opts in to the
# local ones (DEBUG on, a development key) unless DJANGO_SETTINGS_MODULE is already set.
run: export DJANGO_SETTINGS_MODULE ?= config.settings.local
run: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_catalog
	$(BIN)/python manage.py setup_schedules
	$(BIN)/python manage.py collectstatic --noinput -v0
	@echo ""
	@echo "GPU Atlas on http://127.0.0.1:$(PORT)/  (planner: /plan, API: /api/, API docs: /api/docs/, admin: /admin/)"
	@echo "To use the admin, create an account first: DJANGO_SETTINGS_MODULE=$(DJANGO_SETTINGS_MODULE) $(BIN)/python manage.py createsuperuser"
	@echo ""
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

test: install
	$(BIN)/python -m pytest

# The production stack natively against the PostgreSQL and Redis on 127.0.0.1 (see docs/operations.md).
prod-check: install
	$(BIN)/python scripts/prod_check.py

# schemathesis over every API operation against gunicorn (production settings) on the PostgreSQL
# and Redis on 127.0.0.1, in a database of its own; a few minutes (scripts/fuzz_api.py).
fuzz: install
	$(BIN)/python scripts/fuzz_api.py

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy over every app, strict on sizing/, the scrapers' parsers and the client (pyproject.toml [tool.mypy]).
typecheck: install
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

check: export DJANGO_SETTINGS_MODULE ?= config.settings.local
check: install
	$(BIN)/python manage.py check
	$(BIN)/python manage.py makemigrations --check --dry-run

# Regenerate the committed OpenAPI contract (only ever add to it: tests/test_contract.py) and
# the CLI's workload options (both derived from sizing/inputs.py).
schema: export DJANGO_SETTINGS_MODULE ?= config.settings.local
schema: install
	$(BIN)/python manage.py spectacular --format openapi-json --file docs/openapi.json
	$(BIN)/python scripts/cli_options.py && $(BIN)/ruff format --quiet clients/gpuatlas.py

# Re-pin requirements*.txt from requirements*.in in a scratch venv.
lock:
	rm -rf /tmp/gpuatlas-lock && $(PYTHON) -m venv /tmp/gpuatlas-lock
	/tmp/gpuatlas-lock/bin/pip install --quiet -r requirements-dev.in
	@echo "Review and copy the pins from: /tmp/gpuatlas-lock/bin/pip freeze"

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .pytest_cache
