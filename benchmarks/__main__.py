"""``python -m benchmarks``: compare agentmem_nb with its peers and write ``benchmarks/RESULTS.md``."""

import sys

from benchmarks.peers.cli import main

sys.exit(main())
