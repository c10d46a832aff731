"""The ``semisup`` command."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``semisup``."""
    parser = argparse.ArgumentParser(prog="semisup", description="Semi-supervised learning "
                                     "at scale. For SVMlin-compatible training use "
                                     "semisup-svmlin.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="semi-supervised vs supervised on scikit-learn's digits")
    demo.add_argument("--labeled", type=int, default=10, help="labeled images per task (even)")
    demo.add_argument("--repeats", type=int, default=10, help="random labelings per task")
    demo.add_argument("--seed", type=int, default=0)
    from semisup.cli.active_search import add_parser as add_active_search

    add_active_search(sub)
    args = parser.parse_args(argv)
    if hasattr(args, "func"):
        return args.func(args)
    if args.command == "demo":
        if args.labeled < 2 or args.labeled % 2:
            parser.error("--labeled must be an even number >= 2 (half per class)")
        if args.repeats < 1:
            parser.error("--repeats must be >= 1")
        from semisup.cli.demo import run_demo

        run_demo(n_labeled=args.labeled, n_repeats=args.repeats, seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
