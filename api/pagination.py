"""Page-number pagination where a bad ``page`` or ``page_size`` is a 400 naming it."""

import re

from django.conf import settings
from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request

from .errors import bad_request

_WHOLE = re.compile(r"^[0-9]{1,9}$")  # ASCII digits only: str.isdigit() also accepts "²"


class CatalogPagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = settings.API_MAX_PAGE_SIZE

    def get_page_size(self, request: Request) -> int | None:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not _WHOLE.match(raw) or not 1 <= int(raw) <= self.max_page_size:
            raise bad_request(
                {
                    "page_size": [
                        f"must be a whole number from 1 to {self.max_page_size}, not {raw!r}"
                    ]
                }
            )
        return int(raw)

    def check_parameters(self, request) -> None:
        """A 400 naming ``page`` or ``page_size`` when either is not a whole number in range, also
        where no page is cut (a CSV download is the whole filtered set)."""
        raw = request.query_params.get(self.page_query_param, "1")
        if not _WHOLE.match(raw) or int(raw) < 1:
            raise bad_request({"page": [f"must be a whole number of at least 1, not {raw!r}"]})
        self.get_page_size(request)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        bounds = {
            self.page_query_param: {"minimum": 1, "maximum": 10**9 - 1},
            self.page_size_query_param: {"minimum": 1, "maximum": self.max_page_size},
        }
        for parameter in parameters:
            parameter["schema"] = {**parameter["schema"], **bounds.get(parameter["name"], {})}
        return parameters

    def paginate_queryset(self, queryset, request, view=None):
        self.check_parameters(request)
        raw = request.query_params.get(self.page_query_param, "1")
        try:
            return super().paginate_queryset(queryset, request, view)
        except NotFound as exc:  # a page past the end
            pages = self.django_paginator_class(queryset, self.get_page_size(request)).num_pages
            raise bad_request(
                {"page": [f"page {raw} does not exist; there are {pages} page(s)"]}
            ) from exc
