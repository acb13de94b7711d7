# plan_print: --plan. What an install on this machine would take, on stdout:
# a line `runtime: image` or `runtime: private (WHY)`, then one line
# `artifact PATH` per selected artifact, in the order an install takes them.
# The same selection as an install (uname -m, the system's libc, the image's
# glibc version, --glibc-runtime), decided before anything is created,
# locked, copied or downloaded: nothing is written. Musl libraries the image
# lacks are not part of the plan (ensure_musl_libs adds them at install).
plan_print() {
    local k=0
    # Selected first: a machine without artifacts gets the install's own
    # error (exit 4) and an empty stdout.
    if [ "$use_private" -eq 1 ]; then
        select_private_artifacts
        printf 'runtime: private (%s)\n' "$private_why"
    else
        select_artifacts
        image_filter_selected
        printf 'runtime: image\n'
    fi
    while [ "$k" -lt "$selected_count" ]; do
        printf 'artifact %s\n' "${art_path[${selected[$k]}]}"
        k=$((k + 1))
    done
}
