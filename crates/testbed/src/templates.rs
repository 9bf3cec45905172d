//! Server-side HTML templates (minijinja), compiled into the binary.

use minijinja::{context, Environment};
use serde::Serialize;

pub struct Templates {
    env: Environment<'static>,
}

const FILES: [(&str, &str); 13] = [
    ("layout.html", include_str!("../templates/layout.html")),
    ("error.html", include_str!("../templates/error.html")),
    ("front.html", include_str!("../templates/front.html")),
    ("login.html", include_str!("../templates/login.html")),
    ("logout.html", include_str!("../templates/logout.html")),
    ("course.html", include_str!("../templates/course.html")),
    ("page.html", include_str!("../templates/page.html")),
    ("assign.html", include_str!("../templates/assign.html")),
    ("resource.html", include_str!("../templates/resource.html")),
    ("forum.html", include_str!("../templates/forum.html")),
    (
        "discussion.html",
        include_str!("../templates/discussion.html"),
    ),
    ("post.html", include_str!("../templates/post.html")),
    (
        "participants.html",
        include_str!("../templates/participants.html"),
    ),
];

impl Templates {
    pub fn new() -> Templates {
        let mut env = Environment::new();
        // The theme's files, at their revisioned paths.
        let asset: std::collections::BTreeMap<&str, String> = [
            ("styles", crate::assets::Asset::Styles),
            ("polyfill", crate::assets::Asset::Polyfill),
            ("requirejs", crate::assets::Asset::RequireJs),
            ("favicon", crate::assets::Asset::Favicon),
        ]
        .into_iter()
        .map(|(name, a)| (name, a.path()))
        .collect();
        env.add_global("asset", minijinja::Value::from_serialize(&asset));
        for (name, source) in FILES {
            env.add_template(name, source)
                .unwrap_or_else(|e| panic!("built-in template {name} does not parse: {e}"));
        }
        Templates { env }
    }

    pub fn render(
        &self,
        name: &str,
        title: &str,
        page: &serde_json::Value,
        nav: &impl Serialize,
        footer: &impl Serialize,
    ) -> Result<String, minijinja::Error> {
        self.env
            .get_template(name)?
            .render(context! { title, page, nav, footer })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses_and_escapes() {
        let t = Templates::new();
        let html = t
            .render(
                "error.html",
                "Error",
                &serde_json::json!({"message": "<script>"}),
                &None::<()>,
                &None::<()>,
            )
            .unwrap();
        assert!(html.contains("&lt;script&gt;"));
    }
}
