# comment
0 1
1	2

% c
2 0
5 5
