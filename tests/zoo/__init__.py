"""The CMS zoo: loopback sites that behave like the servers and CMSes news sites really run
(WordPress, Django, Rails, Ghost, Drupal, nginx and Apache defaults, CDN bot walls and rate
limits, consent walls, odd charsets, compressed bodies, meta refreshes, canonical and AMP
pages), built on `tests.local_site.LocalSite`.

Each module holds one family of behaviours, each taken from how the system is documented
or what crawler users reported (the docstring of each site says where from); the tests that
drive them are `tests/integration/test_zoo_*.py`. What every zoo test checks: the article
ends up stored with its real text, once, at no more than the requests a browser would
make, and nothing a browser shows fine ends `dead`.
"""
