"""Structured logs: one JSON object per line, with the request id of the request being served."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from .context import request_id

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to every record (``-`` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


class ClientErrorFilter(logging.Filter):
    """Client mistakes Django reports as security errors (a bad Host header, an oversized body)
    become one warning line without a traceback; the server is fine, the request was not."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("django.security.") and record.levelno >= logging.ERROR:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info, record.exc_text = None, None
        return True


class CeleryTaskFilter(logging.Filter):
    """Adds ``task_id`` and ``task_name`` to every record logged while a Celery task runs (in a
    worker or eagerly), so worker log lines say which task wrote them."""

    def filter(self, record: logging.LogRecord) -> bool:
        from celery import current_task  # a proxy: None outside a task

        task = current_task._get_current_object() if current_task else None
        if task is not None and task.request.id is not None:
            record.task_id = task.request.id
            record.task_name = task.name
        return True


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "message", "request_id", ...extra, "exc"}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in payload and not key.startswith("_"):
                payload[key] = (
                    value if isinstance(value, str | int | float | bool | None) else str(value)
                )
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, ensure_ascii=False)
