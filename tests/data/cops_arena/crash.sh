#!/bin/sh
# A player that dies at once.
exit 3
