"""`keel-lab`: the lab's experiments, and checks of real streams and histories.

Every failure is one line on stderr and a documented exit code, never a traceback; output
piped into a reader that stops early (`| head`) ends quietly with 141, and output that cannot be
written (a full disk, a closed stdout) ends with 74.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from keel_lab._core.errors import LabError
from keel_lab._core.tables import printable, width_of, wrap
from keel_lab._i18n import N_, _, ngettext
from keel_lab.course._experiments.registry import EXPERIMENTS, Params
from keel_lab.course._experiments.report import Report
from keel_lab.providers._formats import ALIASES, HISTORY_FORMATS, STREAM_FORMATS

if TYPE_CHECKING:
    from keel_lab.providers._diagnosis import Diagnosis


def bounded(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                _("{given} is not a whole number").format(given=repr(text))) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                _("{value} is outside {low}..{high}").format(value=value, low=low, high=high))
        return value

    return parse


def format_name(prog: str) -> Callable[[str], str]:
    """A `--format` value, another name of a format (`openai`) read as its one name, with a note."""
    def parse(text: str) -> str:
        name = ALIASES.get(text)
        if name is None:
            return text
        with contextlib.suppress(OSError, ValueError):
            print(_("{prog}: note: --format {given} is read as {name}").format(
                prog=prog, given=text, name=name), file=sys.stderr)
        return name

    return parse


def here(path: Path) -> str:
    """`path` as typed from the working folder: relative when it is below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def command() -> str:
    """How to type `keel-lab` here: the script beside this Python (`.venv/bin/keel-lab` from the
    checkout), so an example works without an activated environment."""
    return here(Path(sys.executable).parent / "keel-lab")


def _examples(*lines: tuple[str, str]) -> str:
    """A help's closing examples: each command line (`keel-lab` and the samples shipped with the
    package, as typed from here) with what it shows (already in the learner's language)."""
    from keel_lab.course._data import root

    def sample(word: str) -> str:
        return here(root() / word[1:]) if word.startswith("@") else word

    return _("examples:") + "\n" + "\n".join(
        f"  {' '.join([command(), *map(sample, line.split())])}\n      {what}"
        for line, what in lines)


def _text(text: str) -> str:
    """A description for the raw formatter (which keeps the examples' lines): each line of
    `text` filled to a terminal's 79 columns (display cells: a Chinese character takes two)."""
    return "\n".join(_fill(line, 79) for line in text.split("\n"))


def _fill(text: str, width: int, indent: str = "") -> str:
    """`text` filled to `width` cells, each line after `indent`: as `textwrap` fills English."""
    if width_of(text) == len(text):
        return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent)
    return "\n".join(indent + line for line in wrap(text, width - len(indent)))


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter that keeps a description's and epilog's lines (the examples), and
    wraps each argument's help by display width: as argparse does for English, and Chinese
    within the same columns (a Chinese character takes two)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        if width_of(text) == len(text):
            return super()._split_lines(text, width)
        return wrap(text, width)


class FilledHelpFormatter(HelpFormatter):
    """`HelpFormatter` that fills the description and epilog as well (argparse's default)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if width_of(text) == len(text):
            return argparse.HelpFormatter._fill_text(self, text, width, indent)
        return _fill(text, width, indent)


def _listed(name: str, summary: str) -> str:
    """An experiment's line in `experiments -h`: its name, and its summary (a Chinese one
    wrapped to 79 cells under itself; an English one kept whole, as it always was)."""
    if width_of(summary) == len(summary):
        return f"  {name:<13} {summary}"
    return f"  {name:<13} " + f"\n{' ' * 16}".join(wrap(summary, 79 - 16))


def _formats(formats: Sequence[str]) -> str:
    return ", ".join(formats)


def parser() -> argparse.ArgumentParser:
    """`keel-lab`'s parser, its help in the learner's language (read now, when it is built)."""
    raw = HelpFormatter
    doc = "\n\n".join((
        _("`keel-lab`: the lab's experiments, and checks of real streams and histories."),
        _("Every failure is one line on stderr and a documented exit code, never a traceback; "
          "output piped into a reader that stops early (`| head`) ends quietly with 141, and "
          "output that cannot be written (a full disk, a closed stdout) ends with 74.")))
    p = argparse.ArgumentParser(
        prog="keel-lab", description=_text(doc), formatter_class=raw,
        epilog=_("Each command's own help (keel-lab COMMAND -h) ends with examples.") + "\n\n"
        + _examples(
            ("experiments pairing --trials 200", _("one experiment, as a table")),
            ("assemble @streams/quirks/duplicate_id.sse", _("a refused turn, call by call")),
            ("validate @histories/openai-chat/missing_result.json",
             _("a call without a result")),
            ("progress", _("the exercises you have passed"))))
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    e = sub.add_parser(
        "experiments", help=_("run one or all experiments"), formatter_class=raw,
        description=_text(_("Run the lab's experiments offline and deterministically: the same "
                            "options give the same tables.\nExit 0; 2 when --out cannot be "
                            "written.")),
        epilog=_("experiments:") + "\n" + "\n".join(
            _listed(x.name, x.shown_summary) for x in EXPERIMENTS.values()) + "\n\n" + _examples(
            ("experiments pairing --trials 200", _("mismatched results per pairing strategy")),
            ("experiments pairing --trials 100 --calls 4 --json",
             _("four calls a turn, the result as one JSON object")),
            ("experiments spread --trials 50 --out build/plots",
             _("the table, and build/plots/spread.png"))))
    e.add_argument("name", nargs="?", default="all", choices=["all", *EXPERIMENTS],
                   metavar="NAME", help=_("an experiment (default: all); see the list below"))
    e.add_argument("--trials", type=bounded(1, 1_000_000), default=1000, metavar="N",
                   help=_("randomised trials per point, 1 to 1000000 (default 1000)"))
    e.add_argument("--calls", type=bounded(1, 10), default=3, metavar="N",
                   help=_("tool calls in one turn, 1 to 10 (default 3; the calls experiment "
                          "sweeps 1 to 6 itself)"))
    e.add_argument("--seed", type=bounded(0, 2**63), default=0, metavar="N",
                   help=_("random seed: the same seed, the same results (default 0)"))
    e.add_argument("--out", type=Path, metavar="DIR",
                   help=_("also write a PNG plot per experiment into DIR (made if missing)"))
    e.add_argument("--json", action="store_true",
                   help=_("one JSON object per experiment instead of its table"))

    for name, formats, file_help, format_help, summary, description, examples in (
            ("assemble", STREAM_FORMATS,
             _("the stream file to read, - for standard input (samples: {samples})"),
             _("the stream's format: {formats}, or auto (the default: told from its payloads); "
               "openai is read as openai-chat"),
             _("assemble a recorded stream and diagnose each call"),
             _("Assemble a provider's recorded stream (SSE text or JSON lines) and say, call by "
               "call, whether it may run; what the stream did that the format does not promise "
               "(a quirk) is listed below the table, each once, and the table's error column "
               "names it.\nExit 0 when every call is executable, 1 when any is not (or the "
               "stream never finished), 2 when the file cannot be read as a stream of its "
               "format; 141 when the output pipe closed."),
             (("assemble @streams/openai-chat/parallel_calls.sse",
               _("two calls, both may run: exit 0")),
              ("assemble @streams/quirks/duplicate_id.sse",
               _("two calls with one id: the turn is refused, exit 1")),
              ("assemble @recordings/anthropic/tool_no_arguments.jsonl --json",
               _("a real recording, as one JSON object")))),
            ("validate", HISTORY_FORMATS,
             _("the conversation file to read, - for standard input (samples: {samples})"),
             _("the conversation's format: {formats}, or auto (the default: told from its "
               "messages); openai is read as openai-chat"),
             _("check a conversation's tool-call pairing"),
             _("Check a conversation (a JSON list of messages, or a request body with "
               "'messages', 'contents' or 'input') the way the provider would: every call "
               "answered once, right after it. Each problem is one line, in the provider's "
               "words where the lab knows them.\nExit 0 valid, 1 invalid, 2 unreadable."),
             (("validate @histories/openai-chat/valid.json",
               _("every call answered: exit 0")),
              ("validate @histories/anthropic/missing_result.json",
               _("a call without its result: Anthropic's error, exit 1")),
              ("validate @histories/gemini/duplicate_result.json --json",
               _("a call answered twice, as one JSON object"))))):
        r = sub.add_parser(name, help=summary, description=_text(description),
                           formatter_class=raw,
                           epilog=_examples(*examples))
        r.add_argument("file", type=Path, metavar="FILE",
                       help=file_help.format(samples=here(_samples(name))))
        r.add_argument("--format", default="auto", type=format_name(p.prog),
                       choices=["auto", *formats], metavar="FORMAT",
                       help=format_help.format(formats=_formats(formats)))
        r.add_argument("--json", action="store_true",
                       help=_("the result as one JSON object instead of text"))
        if name == "assemble":
            _refuse_cut_turns(r)

    g = sub.add_parser(
        "progress", help=_("which exercises you have passed"), formatter_class=raw,
        description=_text(_("Show the exercises passed so far, as kept in .keel-progress.json "
                            "beside the notebooks by every check and by `make check`.\nExit 0 "
                            "when every exercise has passed, 1 when some have not yet, 2 when "
                            "the file cannot be read.")),
        epilog=_examples(("progress", _("from the course's folder: your copy's, workspace/")),
                         ("progress workspace/zh --json",
                          _("your copy of the Chinese edition's (make lab LANGUAGE=zh makes "
                            "it), as JSON"))))
    g.add_argument("where", nargs="?", type=Path, metavar="DIR",
                   help=_("the notebooks' folder, or the progress file itself (default: the "
                          "file KEEL_PROGRESS names, else this folder's, else - from the "
                          "course's folder - workspace/'s)"))
    g.add_argument("--json", action="store_true",
                   help=_("the file's content, checked, as JSON"))

    c = sub.add_parser(
        "record", help=_("record one real turn of a provider, then assemble it"),
        formatter_class=raw,
        description=_text(_(
                    "Send one turn with the lab's incident tools to a real provider (or a local "
                    "server), save its stream byte for byte to FILE and assemble it. The only "
                    "command that reaches the network. Keys come from OPENAI_API_KEY, "
                    "ANTHROPIC_API_KEY, GOOGLE_API_KEY or GEMINI_API_KEY (none for ollama); "
                    "with --base-url only from --api-key-env.\nExit 0, 1 and 2 as `assemble` "
                    "on the recording (2 also when nothing was sent: no key, FILE unwritable), "
                    "69 when no whole stream came back (refused, unreachable, timed out, not a "
                    "stream, cut off: bytes that came are kept in FILE.partial).")),
        epilog=_examples(("record openai-chat my_turn.sse", _("needs OPENAI_API_KEY")),
                         ("record ollama qwen3_turn.jsonl --model qwen3:8b",
                          _("a local Ollama, no key")),
                         ("record openai-chat vllm_turn.sse --base-url "
                          "http://localhost:8000/v1 --api-key-env VLLM_KEY",
                          _("any server speaking the format, its key from VLLM_KEY"))))
    c.add_argument("format", type=format_name(p.prog), choices=STREAM_FORMATS, metavar="FORMAT",
                   help=_("the provider's API: {formats}").format(
                       formats=_formats(STREAM_FORMATS)))
    c.add_argument("file", type=Path, metavar="FILE",
                   help=_("where the stream goes (replaced only when whole)"))
    c.add_argument("--model", metavar="NAME",
                   help=_("the model (default: one per provider, printed)"))
    c.add_argument("--prompt", default=_(PROMPT), metavar="TEXT",
                   help=_("the user's turn (default: %(default)r)"))
    c.add_argument("--base-url", metavar="URL",
                   help=_("another server speaking the format (vLLM, LM Studio, OpenRouter, "
                          "Groq, a remote Ollama), as its SDK takes it: OpenAI's with /v1"))
    c.add_argument("--api-key-env", metavar="NAME",
                   help=_("the environment variable holding the key (with --base-url)"))
    c.add_argument("--timeout", type=bounded(1, 3600), default=60, metavar="SECONDS",
                   help=_("to connect, and between two pieces of the stream, 1 to 3600 "
                          "(default 60)"))
    c.add_argument("--json", action="store_true",
                   help=_("the assembly as one JSON object"))
    _refuse_cut_turns(c)
    c.add_argument("--verbose", action="store_true",
                   help=_("the request's URL and body and the answer's type, on stderr"))

    return p


def _refuse_cut_turns(p: argparse.ArgumentParser) -> None:
    p.add_argument("--refuse-cut-turns", action="store_true",
                   help=_("refuse the whole turn when the output limit cut it (finish reason "
                          "length, max_tokens or incomplete): its complete calls do not run "
                          "either"))


def _samples(command: str) -> Path:
    """The folder of samples a command's FILE may be."""
    from keel_lab.course._data import root

    return root() / ("streams" if command == "assemble" else "histories")


WIDTH = 100  # the widest line of a table the CLI prints; a call's table: when piped
MIN_WIDTH = 40  # the narrowest a call's table is made, however narrow the terminal
BROKEN_PIPE = 141  # what a shell reports for a program stopped by SIGPIPE (128 + 13)
OUTPUT_FAILED = 74  # EX_IOERR (sysexits.h): not 1, a verdict, nor 2, unusable input
# `record`'s turn, in the learner's language (a Chinese learner's turn is in Chinese)
PROMPT = N_("Which is more severe, INC-001 or INC-002? Look both up at once.")
UNAVAILABLE = 69  # EX_UNAVAILABLE (sysexits.h): `record` got no whole stream from the provider


class Unavailable(LabError):
    """A provider gave no whole stream: one line, and exit `UNAVAILABLE` instead of 2."""


class OutputError(Exception):
    """Standard output could not be written: told apart from a command's own errors."""


class _Stdout:
    """The command's stdout, whose write failures (but a closed pipe) become `OutputError`."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        with _writing():
            return self._stream.write(text)

    def flush(self) -> None:
        with _writing():
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def _writing() -> Iterator[None]:
    try:
        yield
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:  # ValueError: the stream itself was closed
        raise OutputError(getattr(exc, "strerror", None) or str(exc)) from exc


def main(argv: Sequence[str] | None = None) -> int:
    commands = {"experiments": _experiments, "assemble": _assemble, "validate": _validate,
                "progress": _progress, "record": _record}
    return run(parser(), commands, argv)


def run(p: argparse.ArgumentParser, commands: Mapping[str, Callable[[argparse.Namespace], int]],
        argv: Sequence[str] | None = None) -> int:
    """Parse `argv` with `p` and run its command: a `LabError` becomes one line on stderr and
    exit 2, a closed pipe 141, unwritable output 74 (shared by `keel-lab` and `keel-course`)."""
    args = p.parse_args(argv)
    if sys.stdout is None:  # started with stdout closed (`>&-`): print would drop every line
        _error(p.prog, _("cannot write the output: standard output is closed"))
        return OUTPUT_FAILED
    try:
        with contextlib.redirect_stdout(_Stdout(sys.stdout)):
            code = commands[args.command](args)
            sys.stdout.flush()  # a closed pipe or a full disk is found here, not at exit
        return code
    except LabError as exc:
        _error(p.prog, printable(exc))
        return UNAVAILABLE if isinstance(exc, Unavailable) else 2
    except BrokenPipeError:
        # the reader (`| head`) has gone: stop quietly
        _discard_stdout()
        return BROKEN_PIPE
    except OutputError as exc:
        _discard_stdout()
        _error(p.prog, _("cannot write the output: {reason}").format(reason=exc))
        return OUTPUT_FAILED


def _error(prog: str, message: str) -> None:
    """One line on stderr; a stderr that cannot be written either leaves the exit code alone."""
    with contextlib.suppress(OSError, ValueError):
        print(_("{prog}: error: {message}").format(prog=prog, message=message),
              file=sys.stderr)


def _discard_stdout() -> None:
    """Keep the interpreter's final flush of what stdout still buffers from failing again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def json_text(value: object) -> str:
    """Strict JSON: no NaN or Infinity, which JSON does not have."""
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError as exc:
        raise LabError("not_json_output", N_("the result cannot be written as JSON: {reason}"),
                       reason=exc) from exc


def _experiments(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    names = list(EXPERIMENTS) if args.name == "all" else [args.name]
    if args.out:
        try:
            args.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LabError("unwritable_folder", N_("cannot write plots to {folder}: {reason}"),
                           folder=args.out, reason=exc.strerror) from exc
    params = Params(args.trials, args.calls, args.seed)
    for name in names:
        experiment = EXPERIMENTS[name]
        total = experiment.progress_total(params)
        with tqdm(total=total, desc=name, file=sys.stderr, leave=False, unit=_("trial"),
                  disable=None if total >= 5000 else True) as bar:
            report = experiment.run(params, bar.update)
        print(json_text(report.to_dict()) if args.json else report.table(WIDTH) + "\n")
        if args.out:
            _save_plot(report, args.out)
    return 0


def _assemble(args: argparse.Namespace) -> int:
    from keel_lab.providers._diagnosis import diagnose_file

    diagnosis = diagnose_file(args.file, args.format, refuse_cut_turns=args.refuse_cut_turns)
    print(json_text(diagnosis_json(diagnosis)) if args.json else diagnosis.table(_width()))
    return 0 if diagnosis.ok else 1


def _width() -> int:
    """The terminal's columns (`COLUMNS` first); `WIDTH` when the output is no terminal. The
    output is `sys.stdout` as it is now, not the process's first one: a notebook's kernel may
    have been started from a terminal, and its cells' tables must not depend on that."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return max(int(columns), MIN_WIDTH)
    if sys.stdout.isatty():
        return max(shutil.get_terminal_size((WIDTH, 24)).columns, MIN_WIDTH)
    return WIDTH


def diagnosis_json(d: Diagnosis) -> dict[str, Any]:
    """A diagnosed turn as `assemble --json` prints it: its format and text, each call's
    error's words and every notice's message, and beside each its `code`."""
    return {"format": d.format, "finish_reason": d.finish_reason, "text": d.text,
            "calls": [{"index": c.index, "id": c.id, "name": c.name, "arguments": c.arguments,
                       "input": c.input, "executable": c.executable, "error": c.error,
                       "code": None if c.executable else c.verdict.code} for c in d.calls],
            "provider_calls": [asdict(p) for p in d.provider_calls],
            "diagnostics": [{"index": n.index, "id": n.id, "quirk": n.quirk,
                             "message": n.message, "action": n.action, "code": n.said.code}
                            for n in d.diagnostics]}


def _record(args: argparse.Namespace) -> int:
    from keel_cli._record import RecordFailed, plan, record
    from keel_lab.course._incident_tools import incident_tools

    request = plan(args.format, incident_tools(), args.prompt, model=args.model,
                   base_url=args.base_url, key_env=args.api_key_env, timeout=args.timeout)
    said = (_("recording {format} from {url}, model {model}") if args.model else
            _("recording {format} from {url}, model {model} (the default; --model to change)"))
    _note(request.scrub(said.format(format=request.format, url=request.url,
                                    model=request.model)))
    try:
        saved = record(request, args.file, _note if args.verbose else None)
    except RecordFailed as exc:
        raise Unavailable(exc.code, exc.said.template, **exc.params) from None
    _note(printable(_("recorded {size} bytes to {path}").format(size=saved.size,
                                                                 path=saved.path)))
    return _assemble(argparse.Namespace(file=saved.path, format=request.format, json=args.json,
                                        refuse_cut_turns=args.refuse_cut_turns))


def _note(line: str) -> None:
    """A line about the command's progress, on stderr (stdout keeps the result)."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr)


def _validate(args: argparse.Namespace) -> int:
    from keel_cli._conversation import validate_file
    from keel_lab.providers._streams.records import source

    fmt, problems, previous = validate_file(args.file, args.format)
    if args.json:
        print(json_text({"valid": not problems, "problems": [
            {"message": p.message, "ids": list(p.ids), "code": p.kind} for p in problems],
            "previous_response_id": previous}))
    else:
        verdict = (_("{file}: {format} conversation, valid") if not problems else
                   ngettext("{file}: {format} conversation, {n} problem",
                            "{file}: {format} conversation, {n} problems", len(problems)))
        print(printable(verdict.format(file=source(args.file), format=fmt, n=len(problems))))
        said = Counter(p.message for p in problems)  # the same text at two places: once
        for message, times in said.items():  # ids come from the file: escape what a terminal
            shown = printable(message)
            print("- " + (shown if times == 1 else _("{problem} ({times} times)").format(
                problem=shown, times=times)))
        if previous is not None:
            print(printable(_("note: the body continues the response {id} "
                              "(previous_response_id): an output whose call is not in this "
                              "input answers a call of that response, which OpenAI stores; "
                              "it is not checked here").format(id=previous)))
    return 1 if problems else 0


def _progress(args: argparse.Namespace) -> int:
    from keel_checks.progress import CHAPTERS, find, read

    kept = read(find(args.where))
    print(json_text(kept.to_dict()) if args.json else kept.table(WIDTH))
    return 0 if kept.passed == len(CHAPTERS) else 1


def _save_plot(report: Report, out: Path) -> None:
    from keel_lab.course._plots import plot  # matplotlib loads only when plots are asked for

    fig = plot(report)
    if fig is None:
        print(_("no plot for {experiment}: its result is a few named cases, all in its "
                "table").format(experiment=report.name), file=sys.stderr)
        return
    path = out / f"{report.name}.png"
    try:
        fig.savefig(path, metadata={"Software": None})
    except OSError as exc:
        raise LabError("unwritable_plot", N_("cannot write {path}: {reason}"),
                       path=path, reason=exc.strerror or exc) from exc
    print(_("plot: {path}").format(path=path), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
