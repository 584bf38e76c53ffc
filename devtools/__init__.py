"""Tools for developers and benchmarks, kept out of the production apps: the synthetic catalog
generator (``manage.py scale_catalog``)."""
