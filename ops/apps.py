from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "ops"
    verbose_name = "Operations"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in, user_login_failed

        from .security import login_failed, login_succeeded

        user_login_failed.connect(login_failed, dispatch_uid="ops-login-failed")
        user_logged_in.connect(login_succeeded, dispatch_uid="ops-login-succeeded")
