"""``python -m agentmem_nb.cli`` runs the ``agentmem-nb`` command line."""

import sys

from agentmem_nb.cli import main

sys.exit(main())
