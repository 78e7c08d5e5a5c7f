#!/bin/sh
# A player that reads everything and never answers.
cat > /dev/null
