"""One small fused mqa_topk call against torch.topk over the same call's clean logits: run under a
short timeout before the rest of a device session, so that a fused kernel that hangs costs that
timeout, not the session. Exits 1 when the keys differ."""

import sys

import torch

import mqajit

s, n, h = 64, 40000, 32
q = torch.randn(s, h, 128, device="cuda").to(torch.float8_e4m3fn)
kv = torch.randn(n, 128, device="cuda").to(torch.float8_e4m3fn)
scales, w = torch.rand(n, device="cuda") + 0.5, torch.randn(s, h, device="cuda")
starts = torch.zeros(s, dtype=torch.int32, device="cuda")
ends = (n - s + 1 + torch.arange(s, device="cuda")).int()
got = mqajit.mqa_topk(q, (kv, scales), w, starts, ends, k=2048, path="fused")
logits = mqajit.mqa_logits(q, (kv, scales), w, starts, ends, clean_logits=True)[:, :n]
want = torch.sort(torch.topk(logits, 2048, dim=1).indices.int(), dim=1).values
same = torch.equal(got, want)
print("smoke: fused top-k equals torch.topk's keys:", same)
sys.exit(0 if same else 1)
