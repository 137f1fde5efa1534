"""``utvm ops``: the table of supported operators."""

from __future__ import annotations

import argparse
import json


def add_ops_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("ops", help="the supported operators (TFLite builtins, ONNX operators)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the table as JSON")
    fmt.add_argument("--markdown", action="store_true", help="print docs/OPERATORS.md")
    fmt.add_argument("--validation", action="store_true",
                     help="print docs/VALIDATION.md (the operators' and the importer's checks against TFLite Micro)")
    p.set_defaults(func=cmd_ops)


def cmd_ops(args: argparse.Namespace) -> int:
    from ..ops import table

    if args.json:
        print(json.dumps(table.as_json(), indent=1))
    elif args.markdown:
        print(table.as_markdown(), end="")
    elif args.validation:
        from ..importer import validation

        print(validation.as_markdown(), end="")
    else:
        print(table.as_text(), end="")
    return 0
