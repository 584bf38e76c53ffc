"""Second, independent price sources read by the cross-check (scrapers/crosscheck.py).

They never write prices: what they read is compared with the catalog and disagreements go to the
curators' queue.
"""
