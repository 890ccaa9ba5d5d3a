#!/bin/sh
# Exits 0 but prints something that is not Claude Code JSON.
echo 'Welcome to Claude Code! this is not json'
