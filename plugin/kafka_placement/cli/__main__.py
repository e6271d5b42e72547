import sys

from kafka_placement.cli import main

sys.exit(main())
