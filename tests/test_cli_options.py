"""Numeric options on the command line: a refused value is one line on stderr, exit 2, naming the value and
why it is refused, the same way on every command and for integer and real options alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from certify.cli import main
from certify.core.numbers import MAX_OPTION_DIGITS, NotAReal, option_real

ROOT = Path(__file__).resolve().parents[1]

# A real option of each command that has one, with the arguments it needs to reach its parsing.
REAL_OPTIONS = [
    ["attack", "--l-range", "1", "{}"],
    ["sample", "--n", "2", "--d", "1", "--count", "1", "--value", "gaussian", "--value-norm", "{}"],
    ["prove", "--n", "2", "--radius", "1", "--norm", "1", "--time-limit", "{}"],
    ["reproduce", "wu-fig2", "--dropout", "{}"],
]

REFUSALS = [
    ("nan", "not finite"),
    ("+inf", "not finite"),
    ("Infinity", "not finite"),
    ("1e999", "too large"),
    ("1e-999", "too small"),
    ("abc", "is not a number"),
    ("1_0", "underscores"),
    ("\u0661", "ASCII digits"),  # an Arabic-Indic 1
    ("0." + "3" * (MAX_OPTION_DIGITS + 1), f"more than {MAX_OPTION_DIGITS} significant digits"),
    ("1" * 101, "longer than 100 characters"),
]


def run_cli(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", REAL_OPTIONS, ids=lambda argv: argv[0])
@pytest.mark.parametrize("written, reason", REFUSALS, ids=[r[0][:12] for r in REFUSALS])
def test_a_real_option_that_is_not_one_says_why(argv, written, reason, capsys):
    """Real options said only "invalid real value: '1e999'" where the integer options said why."""
    code, out, err = run_cli([part.format(written) for part in argv], capsys)
    assert code == 2 and out == "", err
    assert err.startswith("certify: error: argument ") and err.count("\n") == 1, err
    assert "invalid real value" in err and reason in err, err


@pytest.mark.parametrize("written, value", [("0.0625", 0.0625), ("1e3", 1000.0), ("  2.5 ", 2.5), (".5", 0.5),
                                            ("-3", -3.0), ("1" + "0" * 40, 1e40), ("0.1", 0.1),
                                            ("1" + "0" * 40 + "e-40", 1.0), ("1e-320", 1e-320)])
def test_a_real_option_is_the_binary64_number_nearest_its_decimal(written, value):
    assert option_real(written) == value


def test_a_real_refusal_is_an_argparse_error_and_a_value_error():
    """argparse prints an ArgumentTypeError's own words; a caller that catches ValueError still catches it."""
    with pytest.raises(ValueError) as caught:
        option_real("1e400")
    assert isinstance(caught.value, NotAReal) and "1e400" in caught.value.reason


@pytest.mark.parametrize("argv, reason", [
    (["graph", "--mask", "causal", "--n", "-1e3"], "got -1000"),
    (["prove", "--n", "2", "--radius", "1", "--norm", "1", "--time-limit", "-inf"], "not finite"),
    (["attack", "--l-range", "1", "-inf"], "not finite"),
    (["attack", "--seed", "-1.", "--l-range", "1", "-Infinity"], "not finite"),
])
def test_a_negative_number_with_an_exponent_or_a_word_is_a_value_not_an_option(argv, reason, capsys):
    """argparse took -1e3, -1. and -inf for unknown options: "expected one argument" beside -1000's own reason."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert reason in err and "expected" not in err, err


def test_a_word_after_a_dash_is_still_an_option(capsys):
    code, out, err = run_cli(["graph", "--mask", "causal", "--n", "-x"], capsys)
    assert code == 2 and "expected one argument" in err, err


@pytest.mark.parametrize("argv", [
    ["check", "examples/layer.json"],
    ["sample", "--n", "2", "--d", "1", "--count", "2", "--out", "{tmp}"],
    ["attack", "--n", "2", "--d", "1"],
    ["trajectory", "examples/layer.json", "--layers", "2"],
    ["init", "--d", "4"],
], ids=lambda argv: argv[0])
@pytest.mark.parametrize("bits", ["10", "2000000"])
def test_max_prec_out_of_range_is_refused_in_the_same_words_by_every_command(argv, bits, tmp_path, capsys,
                                                                             monkeypatch):
    """check said "precision must satisfy 53 <= start <= max <= 1048576 bits" without the value, sample "the
    precision cap must be between ...", attack "--max-prec must be from ...": one check, one message."""
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli([part.format(tmp=tmp_path / "out") for part in argv] + ["--max-prec", bits], capsys)
    assert code == 2 and out == "", err
    assert err == f"certify: error: --max-prec must be an integer from 53 to 1048576 bits, got {bits}\n"


@pytest.mark.parametrize("written, evaluations, seconds", [("1e3", 1000, None), ("2.5e3", 2500, None),
                                                           ("3000", 3000, None), ("1e1s", None, 10.0),
                                                           ("0.5s", None, 0.5), (" 10 s ", None, 10.0)])
def test_a_budget_follows_the_integer_and_real_options_rules(written, evaluations, seconds):
    """--budget 1e3 was refused as "give a number of evaluations" where every other count takes 1e3."""
    from certify.search.attack import Budget
    budget = Budget.parse(written)
    assert (budget.evaluations, budget.seconds) == (evaluations, seconds)


@pytest.mark.parametrize("written, reason", [("1_000", "underscores"), ("1e400", "more than 30 digits"),
                                             ("inf", "not finite"), ("nans", "not finite"), ("1.5", "not an integer"),
                                             ("1e999s", "too large"), ("10sec", "is not an integer")])
def test_a_budget_that_is_refused_says_why(written, reason, capsys):
    code, out, err = run_cli(["attack", "--n", "2", "--d", "1", "--budget", written], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "--budget" in err and reason in err, err


@pytest.mark.parametrize("low, high", [("5", "1"), ("-1", "1"), ("0", "0"), ("1", "1e300")])
def test_an_attack_l_range_out_of_range_names_the_range_given(low, high, capsys):
    code, out, err = run_cli(["attack", "--n", "2", "--d", "1", "--l-range", low, high], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"got {float(low)} {float(high)}" in err, err


@pytest.mark.parametrize("option, value, message", [
    ("--sample", "-1", "--sample must be at least 0, got -1"),
    ("--workers", "0", "workers must be from 1 to"),
    # the campaign's own limits are its manifest's: --limit did nothing, silently, an unknown name included
    ("--limit", "tokens=1", "--limit goes with a certificate file"),
    ("--limit", "bogus=1", "--limit goes with a certificate file"),
])
def test_verify_refuses_each_campaign_option_by_itself(option, value, message, tmp_path, capsys):
    """verify said "--sample must be >= 0 and --workers >= 1" whichever of the two was wrong, without its value."""
    folder = tmp_path / "campaign"
    assert run_cli(["sample", "--n", "2", "--d", "1", "--count", "2", "--out", str(folder), "-q"], capsys)[0] == 0
    code, out, err = run_cli(["verify", str(folder), option, value], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert message in err and "and --workers" not in err, err


@pytest.mark.parametrize("written, reason", [("\u0664", "ASCII digits"), ("4_0", "underscores"),
                                             ("4,,8", "'' is not an integer"), ("4,1.5", "is not an integer")])
def test_init_dimensions_follow_the_integer_options_rules(written, reason, capsys):
    """init --d read each dimension with int(): an Arabic-Indic 4 ran as d = 4, and 1e1 was refused."""
    code, out, err = run_cli(["init", "--d", written], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert reason in err, err


def test_init_dimensions_take_an_exponent():
    from certify.studies import init_scaling
    assert init_scaling.parse_dimensions("1e1, 64,2.56e2") == [10, 64, 256]


@pytest.mark.parametrize("written, reason", [("\u0663", "ASCII digits"), ("1_0", "underscores"),
                                             ("two", "whole number"), ("1.5", "is not an integer")])
def test_expansive_v_layers_follow_the_integer_options_rules(written, reason, capsys):
    """counterexample expansive-v read --layers with int(): an Arabic-Indic 3 ran 3 layers, 1_0 ran 10."""
    code, out, err = run_cli(["counterexample", "expansive-v", "--layers", written], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert reason in err, err


def test_expansive_v_layers_take_an_exponent(capsys):
    code, out, err = run_cli(["counterexample", "expansive-v", "--layers", "2e0", "--json"], capsys)
    assert code == 0 and "2 layers" in out, err


@pytest.mark.parametrize("options, message", [
    (["--n", "9", "--radius", "1", "--norm", "1"], "--n must be between 2 and 8, got 9"),
    (["--n", "3", "--d", "0", "--radius", "1", "--norm", "1"], "--d must be at least 1, got 0"),
    (["--n", "2", "--radius", "-1", "--norm", "1"], "--radius must be positive, got -1"),
    (["--n", "2", "--radius", "1", "--norm", "0"], "--norm must be positive, got 0"),
    (["--n", "2", "--radius", "1", "--norm", "1", "--time-limit", "0"], "--time-limit must be positive, got 0.0"),
])
def test_prove_names_the_option_and_the_value_it_refuses(options, message, capsys):
    """prove said "--radius and --norm must be positive" whichever was wrong, and neither it nor --time-limit,
    --n or --d named the value refused."""
    code, out, err = run_cli(["prove", *options], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert message in err, err


@pytest.mark.parametrize("argv, prog", [
    (["claims", "extra"], "certify claims"),
    (["check", "examples/layer.json", "examples/layer.json"], "certify check"),
    (["counterexample", "residual-far", "--bogus", "1"], "certify counterexample residual-far"),
])
def test_an_unknown_argument_sends_to_the_commands_own_help(argv, prog, capsys, monkeypatch):
    """Arguments a command does not know were refused by the top parser: "(see `certify --help`)"."""
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "unrecognized arguments" in err and f"(see `{prog} --help`)" in err, err


@pytest.mark.parametrize("argv", [["counterexample", "-q", "wu-fig1"], ["counterexample", "--bogus", "wu-fig1"]])
def test_an_option_before_a_counterexamples_name_says_options_follow_the_name(argv, capsys):
    """`certify counterexample -q wu-fig1` was refused as "unrecognized arguments: -q (see `certify --help`)": the
    top parser's words, though -q is an option of every counterexample, given after its NAME."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"unrecognized arguments: {argv[1]}" in err and "`certify --help`" not in err, err
    assert "before NAME: options come after it (see `certify counterexample NAME --help`)" in err, err


def test_proofs_formal_dir_without_formal_is_refused(tmp_path, capsys):
    """--formal-dir without --formal was ignored: every derivation ran (20 s) where the formal proofs were meant."""
    code, out, err = run_cli(["proofs", "--formal-dir", str(tmp_path)], capsys)
    assert code == 2 and out == "" and "give --formal too" in err, err


def test_proofs_empty_formal_dir_is_refused_as_an_unset_variable(tmp_path, capsys, monkeypatch):
    """--formal-dir "" (an unset variable) checked the .v and .g files of the current folder."""
    (tmp_path / "any.g").write_text("{ 1 <= 2 }\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["proofs", "--formal", "--formal-dir", ""], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "an empty path (an unset variable?)" in err, err


@pytest.mark.parametrize("argv", [["--bogus"], ["-q", "check", "examples/layer.json"]])
def test_an_option_before_the_command_is_refused_as_one(argv, capsys):
    """`certify -q check ...` said "the following arguments are required: COMMAND", which it had been given."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"unknown option '{argv[0]}' before the command" in err and "required" not in err, err


def test_certifys_own_options_still_come_before_a_command(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["--vers"])
    assert stopped.value.code == 0 and capsys.readouterr().out.startswith("certify ")


LONG = "x" * 5000


@pytest.mark.parametrize("argv", [
    ["check", "examples/layer.json", "--claim", LONG],
    ["init", "--scheme", LONG],
    ["proofs", LONG],
    ["check", "examples/layer.json", "--limit", LONG],
    ["sample", "--n", "2", "--d", "1", "--count", "1", "--out", "{tmp}", "--distribution", LONG],
    ["graph", "--mask", LONG],
    ["check", LONG],
    ["reproduce", LONG],
    ["check", "examples/layer.json", LONG],  # an argument no option takes: "unrecognized arguments: xxx..."
], ids=lambda argv: " ".join(part for part in argv[:2] if part != LONG))
def test_a_long_value_is_quoted_cut_short_in_a_refusal(argv, tmp_path, capsys, monkeypatch):
    """Refusals quoted the value given whole ("unknown claim 'xxx...'"): a 5000-character argument made a
    5000-character line; a value is cut short as certify.errors.shown cuts it."""
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli([part.format(tmp=tmp_path / "out") for part in argv], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert len(err) < 600 and "(5002 characters)" in err, err


@pytest.mark.parametrize("options, message", [
    (["--value-norm", "2"], "a value norm needs a value matrix: give --value"),
    (["--value", "gaussian", "--value-norm", "0"], "--value-norm must be in (0, 1e6], got 0.0"),
])
def test_sample_value_norm_says_which_of_its_two_rules_is_broken(options, message, tmp_path, capsys):
    """One message, "a value norm needs a value matrix (--value) and must be in (0, 1e6]", for either."""
    code, out, err = run_cli(["sample", "--n", "2", "--d", "1", "--count", "1", "--out", str(tmp_path / "s"),
                              *options], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert message in err and ("and must be" not in err), err


def test_an_attack_too_large_for_its_simplex_is_refused_before_any_work(capsys):
    """--n 64 --d 64 --layers 16 (each within its range) asked numpy for a 36 GiB Nelder-Mead simplex and ended as
    "out of memory" after the set-up: refused first, naming the variables and the memory limit."""
    code, out, err = run_cli(["attack", "--n", "64", "--d", "64", "--layers", "16", "--budget", "50"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "69632 variables" in err and "memory limit" in err and "out of memory" not in err, err


def test_a_bound_function_given_too_few_arguments_says_arguments(capsys):
    """"bound: max() takes two or more" did not say two or more what."""
    code, out, err = run_cli(["check", str(ROOT / "examples/layer.json"), "--bound", "max(D)"], capsys)
    assert code == 2 and "max() takes two or more arguments" in err, err


@pytest.mark.parametrize("option, value", [("--count", "0"), ("--stop-after", "0"), ("--n", "1"), ("--d", "0"),
                                           ("--seed", "-1")])
def test_sample_names_the_option_it_refuses(option, value, tmp_path, capsys):
    """sample said "stop_after must be at least 1" (a Python name), "count must be ..." and "the seed must be ...",
    where every other command names the option: "--stop-after must be ..."."""
    argv = {"--n": "2", "--d": "1", "--count": "2"} | {option: value}
    code, out, err = run_cli(["sample", *[part for pair in argv.items() for part in pair],
                              "--out", str(tmp_path / "s")], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"error: {option} must be" in err and f"got {value}" in err, err


@pytest.mark.parametrize("option, bits", [("--max-prec", "16"), ("--start-prec", "32"), ("--max-prec", "100000")])
def test_model_precision_is_refused_in_the_words_of_every_command_with_its_own_range(option, bits, capsys):
    """model took 16 to 65536 bits in words of its own ("the precision --max-prec 10 is not from 16 to 65536 bits");
    below 53 bits the checker confirms no head's certificate (every head came out undecided), above its limit
    of 65536 neither: the range stays model's, the rule and the words are every command's."""
    code, out, err = run_cli(["model", "--screen", option, bits], capsys)
    assert code == 2 and out == "", err
    assert err == (f"certify: error: {option} must be an integer from 53 to 65536 bits (where the checker confirms "
                   f"a head's certificate), got {bits}\n")


@pytest.mark.parametrize("seed", ["-1", str(2**63)])
def test_sample_takes_the_seeds_every_command_takes(seed, tmp_path, capsys):
    """sample refused seeds from 2^63 that attack, init and reproduce take: one rule (certify.core.seeds), a
    non-negative integer, on every command; its campaign is re-derived by verify under the same rule."""
    folder = tmp_path / "s"
    sampled = run_cli(["sample", "--n", "2", "--d", "1", "--count", "2", "--seed", seed, "--out", str(folder), "-q"],
                      capsys)
    attacked = run_cli(["attack", "--n", "2", "--d", "1", "--budget", "50", "--seed", seed, "-q"], capsys)
    assert sampled[0] == attacked[0] and sampled[2] == attacked[2], (sampled, attacked)
    if seed == "-1":
        assert sampled[0] == 2 and sampled[2] == "certify: error: --seed must be a non-negative integer, got -1\n"
    else:
        assert sampled[0] == 0 and run_cli(["verify", str(folder)], capsys)[0] == 0


@pytest.mark.parametrize("argv, low, high, equal", [
    (["sample", "--n", "2", "--d", "1", "--count", "1", "--out", "{tmp}"], "1e-12", "1000000", True),
    (["attack", "--n", "2", "--d", "1"], "2^-20", "16384", False),
], ids=["sample", "attack"])
def test_each_l_range_states_its_own_rule_in_its_help_and_its_refusal(argv, low, high, equal, tmp_path, capsys):
    """sample's --l-range took LO = HI within 1e-12 to 1e6, attack's LO < HI within 2^-20 to 2^14, each refusal
    in words of its own ("the L range must satisfy ...", "the range of L = a D^2 must satisfy 9.53674e-07 <= ...",
    a bound it does not take itself) and neither help said so: one rule in one message, each command's range
    and reason in both."""
    from certify.cli import build_parser

    argv = [part.format(tmp=tmp_path / "out") for part in argv]
    help_text = " ".join(_help(build_parser, argv[0]).split())
    rule = f"LO {'<=' if equal else '<'} HI within [{low}, {high}]:"
    assert rule in help_text, help_text
    for lo, hi in (("1e-30", "1"), ("1", "1e30"), ("2", "1")) + ((("1", "1"),) if not equal else ()):
        code, out, err = run_cli(argv + ["--l-range", lo, hi], capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith(f"certify: error: --l-range must be {rule}") and err.endswith(
            f"got {float(lo)} {float(hi)}\n"), err


def _help(build_parser, command: str) -> str:
    for action in build_parser(command)._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict) and command in action.choices:
            return action.choices[command].format_help()
    raise AssertionError(command)


@pytest.mark.parametrize("options, named", [(["--all"], "--all goes"), (["--sample", "5"], "--sample goes"),
                                            (["--all", "--workers", "2"], "--all and --workers go")])
def test_verify_refuses_a_campaigns_options_on_a_certificate(options, named, tmp_path, capsys):
    """verify CERT --all (or --sample K, --workers W) did nothing, silently: they re-derive a campaign's records."""
    cert = tmp_path / "cert.json"
    assert run_cli(["check", str(ROOT / "examples/layer.json"), "--out", str(cert), "-q"], capsys)[0] in (0, 1, 3)
    assert run_cli(["verify", str(cert)], capsys)[0] == 0
    code, out, err = run_cli(["verify", str(cert), *options], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"{named} with a campaign folder, not a certificate file" in err, err


def test_verify_refuses_all_beside_a_sample(tmp_path, capsys):
    """verify FOLDER --all --sample 5 re-derived every configuration and said nothing of the sample it was given."""
    code, out, err = run_cli(["verify", str(tmp_path), "--all", "--sample", "5"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "--sample: not allowed with argument --all" in err, err


def test_verify_names_a_missing_path_before_the_options_it_would_refuse(tmp_path, capsys):
    """verify MISSING --all said "--all goes with a campaign folder, not a certificate file": the path is missing."""
    code, out, err = run_cli(["verify", str(tmp_path / "missing.json"), "--all"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "no such certificate" in err, err


@pytest.mark.parametrize("mask", ["causal", "complete", "full", "mask.json"])
def test_graph_refuses_a_window_for_a_mask_without_one(mask, tmp_path, capsys, monkeypatch):
    """graph --mask causal --window 5 printed causal's graph: the width did nothing, silently."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mask.json").write_text("[[1, 0], [1, 1]]")
    assert run_cli(["graph", "--mask", mask, "--n", "2"], capsys)[0] == 0
    code, out, err = run_cli(["graph", "--mask", mask, "--n", "2", "--window", "5"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"--window goes with the sliding and uni masks, not with {mask!r}" in err, err


@pytest.mark.parametrize("mask", ["sliding", "uni", "window"])
def test_graph_window_still_sets_the_width_of_sliding_and_uni(mask, capsys):
    default, one, three = (run_cli(["graph", "--mask", mask, "--n", "7", *width], capsys)
                           for width in ([], ["--window", "1"], ["--window", "3"]))
    assert default == one and three[0] == 0 and three[1] != one[1], three


@pytest.mark.parametrize("option", ["--n", "--d"])
def test_attack_names_the_size_it_refuses_and_its_value(option, capsys):
    """attack --n 99 said "--n and --d are at most 64" whichever was too large, without the value given."""
    sizes = {"--n": "2", "--d": "1", option: "99"}  # each once: a second --n is refused as given twice
    code, out, err = run_cli(["attack", *[word for pair in sizes.items() for word in pair], "--budget", "50"], capsys)
    assert code == 2 and out == "", err
    assert err == (f"certify: error: {option} must be at most 64 (the attack looks for small, readable "
                   "configurations), got 99\n")


@pytest.mark.parametrize("options, said", [(["--mask", "causal", "--n", "0"],
                                            "--n must be from 1 to 1024 tokens, got 0"),
                                           (["--mask", "causal", "--n", "5000"],
                                            "--n must be from 1 to 1024 tokens, got 5000"),
                                           (["--mask", "uni", "--n", "4", "--window", "0"],
                                            "--window must be at least 1, got 0")])
def test_graph_names_the_option_it_refuses_and_its_value(options, said, capsys):
    """graph --n 0 said "the number of tokens must be at least 1", --n 5000 "the mask has 5000 tokens", --window 0
    "the window width must be ...": none named the option given."""
    code, out, err = run_cli(["graph", *options], capsys)
    assert code == 2 and out == "" and err == f"certify: error: {said}\n", err


@pytest.mark.parametrize("argv", [["check", "{config}"], ["attack", "--n", "3", "--d", "2", "--mask", "nosuch"]],
                         ids=["configuration", "attack"])
def test_a_mask_name_where_no_file_is_read_gets_no_file_hint(argv, tmp_path, capsys):
    """A mask name in a configuration, or attack's --mask, was answered "known masks: ..., or a JSON file": neither
    reads a file.  graph's --mask, which does, still says so."""
    config = tmp_path / "config.json"
    config.write_text('{"X": [[0], [1]], "A": [[1]], "mask": "nosuch"}')
    code, out, err = run_cli([part.format(config=config) for part in argv], capsys)
    field = "layer.mask: " if argv[0] == "check" else ""  # a configuration's message names the layer's field
    assert code == 2 and err.startswith(f"certify: error: {field}unknown mask 'nosuch'; known masks: causal, "), err
    assert "file" not in err, err
    code, out, err = run_cli(["graph", "--mask", "nosuch", "--n", "3"], capsys)
    assert code == 2 and err.endswith("nor a JSON file\n"), err


def test_a_double_dash_before_the_command_ends_certifys_own_options(capsys, monkeypatch):
    """`certify -- check x` said argparse's "invalid choice: '--'": "--" ends certify's own options, the command
    follows it (and only a command: `certify -- --help` names '--help' as no command)."""
    monkeypatch.chdir(ROOT)
    direct = run_cli(["check", "examples/layer.json"], capsys)
    assert run_cli(["--", "check", "examples/layer.json"], capsys) == direct and direct[0] == 0
    code, out, err = run_cli(["--", "--help"], capsys)
    assert code == 2 and out == "" and err.startswith("certify: error: unknown command '--help'"), err
    code, out, err = run_cli(["--"], capsys)
    assert code == 2 and out == "" and "give a command" in err and "invalid choice" not in err, err


@pytest.mark.parametrize("argv, where", [
    (["trajectory", "examples/layer.json", "--layers", "2"], "with --out"),
    (["model", "{tiny}", "--screen", "--out", "{tmp}"], "with --out and without --screen"),
], ids=["trajectory", "model"])
@pytest.mark.parametrize("figure, named", [(["--format", "svg"], "--format goes"), (["--dpi", "300"], "--dpi goes"),
                                           (["--format", "pdf", "--dpi", "300"], "--format and --dpi go")])
def test_figure_options_where_no_figure_is_written_are_refused(argv, where, figure, named, tmp_path, capsys,
                                                               monkeypatch):
    """trajectory --format svg without --out, model --screen --dpi 300: no figure is written, the options did
    nothing, silently."""
    from tiny_bert import write_model

    monkeypatch.chdir(ROOT)
    argv = [part.format(tiny=write_model(tmp_path / "tiny"), tmp=tmp_path / "out") for part in argv]
    code, out, err = run_cli(argv + figure, capsys)
    assert code == 2 and out == "" and err == f"certify: error: {named} with the figures, written only {where}\n", err


@pytest.mark.parametrize("options, named", [(["--start-prec", "1024"], "--start-prec goes"),
                                            (["--max-prec", "128"], "--max-prec goes"),
                                            (["--bits", "128", "--max-prec", "1024"],
                                             "--start-prec and --max-prec go")])
def test_model_screen_refuses_the_precision_it_does_not_use(options, named, tmp_path, capsys):
    """model --screen is float64 only: --start-prec and --max-prec in range did nothing, silently."""
    from tiny_bert import write_model

    tiny = str(write_model(tmp_path / "tiny"))
    assert run_cli(["model", tiny, "--screen"], capsys)[0] == 0
    code, out, err = run_cli(["model", tiny, "--screen", *options], capsys)
    assert code == 2 and out == "", err
    assert err == f"certify: error: {named} with the certified run, not with --screen (float64 only)\n", err


@pytest.mark.parametrize("options, named", [(["--restart"], "--restart goes"),
                                            (["--limit", "3", "--workers", "2"], "--limit and --workers go")])
def test_model_names_the_corpus_options_given_without_corpus(options, named, tmp_path, capsys):
    """model --restart without --corpus said "--limit, --workers, --executor, --scheduler and --restart go with
    --corpus", every one of them, whichever was given."""
    code, out, err = run_cli(["model", str(tmp_path / "no-model"), *options], capsys)
    assert code == 2 and out == "" and err == f"certify: error: {named} with --corpus\n", err


@pytest.mark.parametrize("argv, hinted", [
    (["attack", "--n", "2", "--d", "1", "--bound", "-D+2*D"], "--bound=VALUE"),  # a bound may begin with "-"
    (["sample", "--n", "3", "--d", "2", "--count", "3", "--bound", "-D"], "--bound=VALUE"),
    (["check", "examples/layer.json", "--out", "-q"], None),  # an option after it: the value was forgotten
    (["attack", "--budget"], None),  # nothing after it
])
def test_a_value_that_begins_with_a_dash_is_shown_how_to_give(argv, hinted, capsys, tmp_path):
    """--bound "-D+2*D" said only "argument --bound: expected one argument": argparse takes the value for an
    option.  The line says to join it (--bound=-D+2*D), where that is what happened, and only there."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "expected one argument" in err, err
    if hinted:
        assert f"a value that begins with '-' is written joined to its option: {hinted}" in err, err
    else:
        assert "joined" not in err, err
    if hinted:  # and so written, it is read: the search or the campaign runs
        joined = argv[:-2] + [f"{argv[-2]}={argv[-1]}", "-q"]
        extra = ["--budget", "50"] if argv[0] == "attack" else ["--out", str(tmp_path / "c"), "--workers", "1"]
        code, out, err = run_cli(joined + extra, capsys)
        assert code in (0, 1) and err == "", err


@pytest.mark.parametrize("bytes_limit", ["1e12", "1e29"])
def test_a_raised_bytes_limit_reads_a_small_file_as_it_is(bytes_limit, tmp_path, capsys, monkeypatch):
    """--limit bytes=1e12 made every file "out of memory" (exit 2) and bytes=1e29 an internal error (exit 4): the
    reader asked for a buffer of the limit's size at once, whatever the file's; `sample --limit bytes=1e12` then
    told the user to run that very verify command."""
    monkeypatch.chdir(ROOT)
    cert = tmp_path / "cert.json"
    for argv in (["check", "examples/layer.json", "--out", str(cert)], ["verify", str(cert)]):
        code, out, err = run_cli([*argv, "--limit", f"bytes={bytes_limit}", "-q"], capsys)
        assert code == 0 and err == "", err
