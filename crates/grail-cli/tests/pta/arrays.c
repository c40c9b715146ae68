/* Arrays of pointers: elements are not told apart. */

int main(void) {
    int a = 1, b = 2, c = 3, d = 4;
    int *arr[3] = {&a, &b, 0};
    arr[2] = &c;
    int **pp = &arr[1];
    int *e = *pp;
    int *(*whole)[3] = &arr;
    int *f = (*whole)[0];
    int *other = &d;
    return *e + *f + *other;
}
