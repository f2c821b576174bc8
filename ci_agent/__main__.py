import sys

from ci_agent.cli.main import main

sys.exit(main())
