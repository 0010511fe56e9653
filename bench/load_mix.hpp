// Issue 8: the mixed load of many processes on one home. Written next.
#pragma once
