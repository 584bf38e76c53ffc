"""The request id of the work in progress, for log lines (a context variable, thread and task safe)."""

from contextvars import ContextVar

request_id: ContextVar[str] = ContextVar("request_id", default="-")
