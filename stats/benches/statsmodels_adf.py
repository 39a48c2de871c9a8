"""Times statsmodels' adfuller against `vernier analyze` on the same series.

The series: 100,000 M/M/1 sojourn times at load 0.8 (Lindley's recursion, NumPy seed 5),
autocorrelated as a latency series is. Needs numpy and statsmodels (pip install
statsmodels) and a release build of vernier. Run from the repository root:

    python3 stats/benches/statsmodels_adf.py

It prints both tools' ADF statistic, lag and nobs, and how long each took (vernier's time
is the whole analysis: percentiles with CIs, Spearman lag search and ADF).
"""
import json
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from statsmodels.tsa.stattools import adfuller

warnings.simplefilter("ignore")
n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
rng = np.random.default_rng(5)
a = rng.exponential(1 / 0.8, n)
s = rng.exponential(1.0, n)
w = np.zeros(n)
for i in range(1, n):
    w[i] = max(0.0, w[i - 1] + s[i - 1] - a[i])
x = 20 + 10 * (w + s)

with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    np.savetxt(f, x)
    path = f.name

t = time.perf_counter()
stat, pvalue, usedlag, nobs, _, _ = adfuller(x, autolag="AIC")
reference_s = time.perf_counter() - t

t = time.perf_counter()
out = subprocess.run(["target/release/vernier", "analyze", path], check=True, capture_output=True)
vernier_s = time.perf_counter() - t
ours = json.loads(out.stdout)["stationarity"]

print(f"n = {n}")
print(f"statsmodels adfuller: stat {stat!r} usedlag {usedlag} nobs {nobs}  in {reference_s:.1f} s")
print(f"vernier analyze:      stat {ours['adf_stat']!r} usedlag {ours['usedlag']} nobs {ours['nobs']}  in {vernier_s:.2f} s (whole analysis, process start included)")
