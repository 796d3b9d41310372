"""cfn-lint on the synthesized template: `python -m infra.lint cdk.out/Mns.template.json` fails on any finding."""

import sys
from pathlib import Path

# Rules not applied, each with its reason.
IGNORED = {
    "W3005": "CDK gives every function an explicit DependsOn on its role besides the GetAtt: redundant, harmless",
}


def findings(template: Path) -> list[str]:
    # cfn-lint imported here: its import costs most of a second (sympy, networkx), paid only by who lints, not by
    # every module (and each test worker's collection) that imports this one.
    from cfnlint.api import ManualArgs, lint

    matches = lint(template.read_text(), config=ManualArgs(ignore_checks=list(IGNORED)))
    return [f"{template}:{match.linenumber}: {match.rule.id} {match.message}" for match in matches]


def main(paths: list[str]) -> int:
    problems = [problem for path in paths for problem in findings(Path(path))]
    print("\n".join(problems) or f"cfn-lint: no findings in {', '.join(paths)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
