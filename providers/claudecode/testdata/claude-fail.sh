#!/bin/sh
# Dies before printing a result.
echo 'Error: could not connect to the mothership' >&2
exit 3
