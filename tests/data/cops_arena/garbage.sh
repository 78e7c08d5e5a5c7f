#!/bin/sh
# A player that answers every request with a line that is not a plan.
while read -r line; do
  echo "this is not json {"
done
