/* Pointers to locals, and a swap through double pointers. */

void swap(int **a, int **b) {
    int *t = *a;
    *a = *b;
    *b = t;
}

int main(void) {
    int x = 1, y = 2, z = 3;
    int *p = &x, *q = &y, *r = &z;
    swap(&p, &q);
    return *p + *q + *r;
}
