#!/bin/sh
# Outlives its timeout, with a child of its own: the runner must stop the whole group.
sleep 600 &
exec sleep 600
