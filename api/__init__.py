"""Project-wide API plumbing shared by every app's endpoints (catalog, sizing, scrapers): error
shape, strict filter backends, pagination, permissions and renderers. Apps import from here;
this package imports from no app."""
