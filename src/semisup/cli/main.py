"""The ``semisup`` command: demo, and fit/predict for every estimator."""

from __future__ import annotations

import argparse
import sys

from semisup._version import __version__


def _parser() -> argparse.ArgumentParser:
    from semisup.cli.fitpredict import add_parsers

    parser = argparse.ArgumentParser(prog="semisup", description="Semi-supervised learning "
                                     "at scale. For SVMlin-compatible training use "
                                     "semisup-svmlin.")
    parser.add_argument("--version", action="version", version=f"semisup {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="the automatic classifier vs supervised models on "
                          "scikit-learn's digits")
    demo.add_argument("--labeled", type=int, default=10, help="labeled images per task (even)")
    demo.add_argument("--repeats", type=int, default=5, help="random labelings per task")
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(run=None)
    add_parsers(sub)
    from semisup.cli.active_search import add_parser as add_active_search

    add_active_search(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``semisup``; returns the exit status (0 success, 2 bad input)."""
    from semisup import io
    from semisup.cli.fitpredict import UsageError

    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.labeled < 2 or args.labeled % 2:
            parser.error("--labeled must be an even number >= 2 (half per class)")
        if args.repeats < 1:
            parser.error("--repeats must be >= 1")
        from semisup.cli.demo import run_demo

        run_demo(n_labeled=args.labeled, n_repeats=args.repeats, seed=args.seed)
        return 0
    from semisup.cli._common import one_line_warnings

    try:
        with one_line_warnings(f"semisup {args.command}"):
            return args.run(args)
    except (io.FileFormatError, UsageError, ValueError, OSError) as exc:
        msg = str(exc)
        if isinstance(exc, FileNotFoundError) and exc.filename:
            msg = f"{exc.filename}: no such file"
        print(f"semisup {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"semisup {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
