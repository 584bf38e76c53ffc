"""Celery worker and beat log JSON lines through the project's LOGGING, with task ids."""

from __future__ import annotations

import copy
import io
import json
import logging
import logging.config

from celery.signals import setup_logging
from django.conf import settings

from config.celery_app import app, configure_logging


def test_celery_leaves_logging_to_the_project():
    # With a receiver on setup_logging, Celery configures no logging of its own (worker, beat).
    assert any(
        getattr(receiver(), "__name__", None) == "configure_logging"
        for _, receiver in setup_logging.receivers
    )


def test_a_task_logs_one_json_line_with_its_task_id(monkeypatch):
    original = copy.deepcopy(settings.LOGGING)
    stream = io.StringIO()
    logging_config = copy.deepcopy(settings.LOGGING)
    logging_config["handlers"]["console"]["formatter"] = "json"
    logging_config["handlers"]["console"]["stream"] = stream
    monkeypatch.setattr(settings, "LOGGING", logging_config)
    try:
        configure_logging()  # what the setup_logging signal runs in a worker or beat

        @app.task(name="tests.log_something")
        def log_something() -> str:
            logging.getLogger("scrapers.tasks").info("refreshing %s", "aws")
            return "done"

        result = log_something.apply()
        assert result.get() == "done"
        logging.getLogger("scrapers.tasks").info("outside any task")
    finally:
        logging.config.dictConfig(original)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    inside = next(line for line in lines if line["message"] == "refreshing aws")
    assert inside["task_id"] == result.id
    assert inside["task_name"] == "tests.log_something"
    assert inside["level"] == "INFO" and inside["logger"] == "scrapers.tasks"
    outside = next(line for line in lines if line["message"] == "outside any task")
    assert "task_id" not in outside
