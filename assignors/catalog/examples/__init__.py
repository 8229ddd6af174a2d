"""Example assignor plugins, loadable by name like any custom assignor.

`assignors.catalog.examples.random_assignor:RandomAssignor` (protocol name `random`) is the
documented example of the plugin contract described in `assignors.catalog.plugins`.
"""
