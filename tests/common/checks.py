"""Named checks for the Python test drivers: each prints PASS or FAIL with its name, and a
failure its detail; the names of the failed ones collect in `failures` for the exit status.

    from checks import check, failures
    if not check("the layer is found", ok, output):
        return
    ...
    return 1 if failures else 0
"""

failures = []


def check(name, ok, detail=""):
    """Reports one check; returns `ok`."""
    print(f"{'PASS' if ok else 'FAIL'}: {name}")
    if not ok:
        failures.append(name)
        if detail:
            print(detail.rstrip())
    return ok
