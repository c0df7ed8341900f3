#!/usr/bin/env python3
"""Validates plans against runtime/plan.schema.json (the compiler side of the
plan contract; the runtime side is runtime/lib/format/Plan.cpp).

usage: validate_plan.py SCHEMA PLAN...   (PLAN may be - for stdin)
"""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
status = 0
for path in sys.argv[2:]:
    plan = json.load(sys.stdin if path == "-" else open(path))
    errors = sorted(validator.iter_errors(plan), key=lambda e: list(e.path))
    for error in errors:
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
        print(f"{path}: {where}: {error.message}")
        status = 1
    if not errors:
        print(f"{path}: valid")
sys.exit(status)
