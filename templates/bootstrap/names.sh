# ---- package names ---------------------------------------------------------

# package_for CMD MANAGER: set pkg to the package that provides CMD under
# MANAGER. Generated from the one table in src/scripts/bootstrap.rs; a
# command it does not list is provided by the package of the same name.
package_for() {
    pkg=$1
    case $1 in
{%- for arm in package_arms %}
{%- if let Some(all) = arm.all %}
        {% for c in arm.commands %}{% if !loop.first %} | {% endif %}{{ c }}{% endfor %}) pkg={{ all }} ;;
{%- else %}
        {% for c in arm.commands %}{% if !loop.first %} | {% endif %}{{ c }}{% endfor %})
            case $2 in
{%- for row in arm.rows %}
                {{ row.manager }}) pkg={{ row.package }} ;;
{%- endfor %}
            esac
            ;;
{%- endif %}
{%- endfor %}
    esac
}

# musl_soname LIB: set soname and pkg for a musl library, from the table in
# src/musl.rs. Unknown libraries are a usage error.
musl_soname() {
    case $1 in
{%- for lib in musl_libs %}
        {{ lib.name }})
            soname={{ lib.soname }}
            pkg={{ lib.package }}
            ;;
{%- endfor %}
        *) die 2 "unknown musl library: '$1' (known: $MUSL_LIBS_KNOWN)" ;;
    esac
}

{% include "lib/musl.sh" %}

