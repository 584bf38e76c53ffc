"""Filter backends that refuse what they do not understand instead of silently ignoring it."""

from __future__ import annotations

from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.filters import OrderingFilter

from .errors import bad_request

# Parameters every list endpoint understands besides its filters.
COMMON_PARAMETERS = {"page", "page_size", "ordering", "format"}


class StrictFilterBackend(DjangoFilterBackend):
    """django-filter, plus a 400 for a query parameter no filter knows (a typo is not a no-op)."""

    def filter_queryset(self, request, queryset, view):
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is not None:
            known = set(filterset_class.base_filters) | COMMON_PARAMETERS
            unknown = sorted(set(request.query_params) - known)
            if unknown:
                allowed = ", ".join(sorted(known))
                raise bad_request(
                    {
                        name: [f"unknown parameter; this endpoint accepts: {allowed}"]
                        for name in unknown
                    }
                )
        return super().filter_queryset(request, queryset, view)


class StrictOrderingFilter(OrderingFilter):
    """``ordering`` with a 400 naming the parameter for a field that cannot be sorted on."""

    def get_ordering(self, request, queryset, view):
        params = request.query_params.get(self.ordering_param)
        if params:
            fields = [param.strip() for param in params.split(",") if param.strip()]
            valid = {
                item[0] for item in self.get_valid_fields(queryset, view, {"request": request})
            }
            invalid = [f for f in fields if f.lstrip("-") not in valid]
            if invalid:
                raise bad_request(
                    {
                        self.ordering_param: [
                            f"cannot order by {', '.join(invalid)}; choose from {', '.join(sorted(valid))}"
                        ]
                    }
                )
            if fields:
                # A final tie-break on the key keeps pages stable when values repeat.
                return [*fields, "pk"] if not {"pk", "id", "-pk", "-id"} & set(fields) else fields
        return self.get_default_ordering(view)
