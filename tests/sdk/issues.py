"""Titles of the issues whose features some tests exercise before they land.

A test for a feature of an issue that has not landed yet carries
``@pytest.mark.xfail(strict=True, reason=<title>)`` on a line of its own. When
the issue lands, delete that line from each of its tests: the test must then
pass. ``strict=True`` makes an unexpected pass fail the run, so a mark cannot
outlive the work it waits for.
"""

# Issue 2 (the foundation): its tests carry no mark.
CORE = (
    "Core blob service: workspace, storage engine, containers and block blobs "
    "over the Azure Blob REST API"
)

# Issue 3.
CONDITIONS = (
    "Optimistic concurrency: ETags and conditional headers on every operation, "
    "atomic with the write"
)

# Issue 4.
LEASES = "Leases: blob and container leases with the real service's 409/412 semantics"

# Issue 5.
BLOCKS = (
    "Blocks, append blobs, snapshots and copy on the extent model, with garbage "
    "collection"
)

# Issue 8.
AUTH = "Who gets in: SAS, public access, ACLs, HTTPS and hostile input"
