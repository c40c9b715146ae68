; int a, b;
; int *get_a(void) { return &a; }
; int *get_b(void) { return &b; }
; int *id(int *p) { return p; }
; int *never_taken(int *p) { return p; }
; int *(*table[2])(void) = { get_a, get_b };
; int *(*handler)(int *) = id;
; void install(void (**slot)(void)) { *slot = (void (*)(void))get_a; }
; int main(void) { int *r = table[1](); int *s = handler(&b); never_taken(&a); ... }
@a = dso_local global i32 0, align 4
@b = dso_local global i32 0, align 4
@table = dso_local global [2 x ptr] [ptr @get_a, ptr @get_b], align 16
@handler = dso_local global ptr @id, align 8
@slot = dso_local global ptr null, align 8

define dso_local ptr @get_a() {
entry:
  ret ptr @a
}

define dso_local ptr @get_b() {
entry:
  ret ptr @b
}

define dso_local ptr @id(ptr noundef %p) {
entry:
  %p.addr = alloca ptr, align 8
  store ptr %p, ptr %p.addr, align 8
  %0 = load ptr, ptr %p.addr, align 8
  ret ptr %0
}

define dso_local ptr @never_taken(ptr noundef %p) {
entry:
  ret ptr %p
}

define dso_local void @install(ptr noundef %slot) {
entry:
  store ptr @get_a, ptr %slot, align 8
  ret void
}

define dso_local i32 @main() {
entry:
  %r = alloca ptr, align 8
  %s = alloca ptr, align 8
  %0 = load ptr, ptr getelementptr inbounds ([2 x ptr], ptr @table, i64 0, i64 1), align 8
  %call = call ptr %0()
  store ptr %call, ptr %r, align 8
  %1 = load ptr, ptr @handler, align 8
  %call1 = call ptr %1(ptr noundef @b)
  store ptr %call1, ptr %s, align 8
  %call2 = call ptr @never_taken(ptr noundef @a)
  call void @install(ptr noundef @slot)
  %2 = load ptr, ptr @slot, align 8
  %call3 = call ptr %2()
  ret i32 0
}
