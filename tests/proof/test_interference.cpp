// Issue 8: proof under load and faults (interference). Written next.
