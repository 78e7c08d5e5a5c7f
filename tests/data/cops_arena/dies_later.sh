#!/bin/sh
# A player that answers its first plan (staying) and then crashes.
read -r start
read -r plan
echo '{"t":0,"moves":[["S","S","S","S","S"]]}'
exit 1
