# A user hook: raise the wave's priority before the store, then lower it.
s_setprio 3
