import sys

from ci_agent.main import main

sys.exit(main())
