"""loragate's readings against vLLM's own server pipeline, on a generated corpus.

- `tools`: the tools of the corpus (every JSON Schema type), the serving stacks, and the
  writers of calls, values and prose;
- `hermes_cases`, `xml_cases`: the kinds of output, one function a kind;
- `corpus`: the seeded corpus and random junk;
- `oracle`: what `vllm serve --enable-auto-tool-choice --tool-call-parser P
  --reasoning-parser R` runs on a finished output (vLLM's `ParserManager.get_parser`);
- `compare`: loragate's served reading held to the oracle, and where the strict and
  lenient readings differ from it, by class.

Used by `tests/test_vllm_agreement.py` (CI) and `benchmarks/bench_vllm_agreement.py`
(the figures of docs/call-formats.md).
"""
