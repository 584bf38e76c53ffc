"""Who may do what through the API."""

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS, BasePermission


class ReadAnonymousWriteWithToken(BasePermission):
    """Reads are open (or token-only when API_REQUIRE_TOKEN_FOR_READS); writes need a staff token.

    Operation endpoints that only compute (recommend, compare, estimate) opt in to anonymous POST
    with ``allow_anonymous_post = True`` on the view.
    """

    def has_permission(self, request, view) -> bool:
        user = request.user
        authenticated = bool(user and user.is_authenticated)
        if request.method in SAFE_METHODS or getattr(view, "allow_anonymous_post", False):
            return authenticated or not settings.API_REQUIRE_TOKEN_FOR_READS
        return authenticated and user.is_staff
