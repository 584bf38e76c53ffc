# GPU Atlas web/worker image. The same image runs gunicorn, the Celery worker and beat.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production

WORKDIR /app
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN DJANGO_SECRET_KEY=build-only-collectstatic python manage.py collectstatic --noinput -v0 \
    && useradd --system --home /app gpuatlas && chown -R gpuatlas /app
USER gpuatlas
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "2", "--backlog", "64", "--access-logfile", "-"]
